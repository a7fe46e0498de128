package sqlstore

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/schemas"
)

// TestLeaseFieldsAgreeWithSchema holds the Go fast path to the schema: it
// never vouches for a record the schema refuses, and on UTC times, which are
// all the store writes, it agrees with the schema exactly.
func TestLeaseFieldsAgreeWithSchema(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	times := map[string]time.Time{
		"ordinary":              base,
		"microseconds":          base.Add(123456 * time.Microsecond),
		"nanoseconds":           base.Add(7),
		"unix epoch":            time.Unix(0, 0).UTC(),
		"zero time (year 1)":    {},
		"year 0":                time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		"year -1":               time.Date(-1, 12, 31, 23, 59, 59, 0, time.UTC),
		"last instant of 9999":  time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		"year 10000":            time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		"leap day":              time.Date(2024, 2, 29, 23, 59, 59, 0, time.UTC),
		"zero offset, not UTC":  base.In(time.FixedZone("", 0)),
		"+02:00":                base.In(time.FixedZone("CEST", 2*3600)),
		"-00:30, year 9999 end": time.Date(9999, 12, 31, 23, 59, 0, 0, time.FixedZone("", -1800)),
	}
	versions := []int64{math.MinInt64, -1, 0, 1, 2, math.MaxInt64}

	check := func(t *testing.T, c domain.ClaimRecord, utc bool) {
		t.Helper()
		fast := leaseFieldsValid(&c)
		err := schemas.Validate(schemas.ClaimRecord, &c)
		if fast {
			require.NoError(t, err, "the fast path vouched for a record the schema refuses")
		}
		if utc {
			require.Equal(t, err == nil, fast, "fast path and schema disagree (schema: %v)", err)
		}
	}
	for name, tm := range times {
		utc := tm.Location() == time.UTC
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, v := range versions {
				rec := domain.ClaimRecord{ResourceType: domain.ResourceEvent, ResourceID: "ev-1", OwnerID: "w1",
					LeaseExpiresAt: base, HeartbeatAt: base, ClaimVersion: v}
				for _, field := range []func(c *domain.ClaimRecord){
					func(c *domain.ClaimRecord) { c.LeaseExpiresAt = tm },
					func(c *domain.ClaimRecord) { c.HeartbeatAt = tm },
					func(c *domain.ClaimRecord) { c.ReleasedAt = &tm },
				} {
					c := rec
					field(&c)
					check(t, c, utc)
				}
			}
		})
	}
}

// TestClaimSchemaIsPerProperty: the fast paths check a claim's fields apart
// (the identity once, the times and version on every write), which is only
// the schema's verdict while the schema has no rule tying properties
// together. A schema that gains one fails here, so the split is revisited.
func TestClaimSchemaIsPerProperty(t *testing.T) {
	t.Parallel()
	src, err := schemas.Source(schemas.ClaimRecord)
	require.NoError(t, err)
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(src, &doc))
	perProperty := map[string]bool{"$schema": true, "$id": true, "title": true, "description": true,
		"type": true, "additionalProperties": true, "required": true, "properties": true}
	for k := range doc {
		require.True(t, perProperty[k], "claim_record.schema.json has top-level %q, which may tie properties together: "+
			"check that validateAcquire and validateSwap still give the schema's verdict, then allow it here", k)
	}
	var props map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(doc["properties"], &props))
	require.ElementsMatch(t, []string{"resource_type", "resource_id", "owner_id", "lease_expires_at", "heartbeat_at",
		"claim_version", "released_at"}, keys(props), "claim properties changed: revisit leaseFieldsValid and claimIdentity")
}

// TestIdentityMemo_RemembersOnlyIdentitiesThatPassed: a refused identity is
// checked in full every time, and a remembered one still has its times
// checked.
func TestIdentityMemo_RemembersOnlyIdentitiesThatPassed(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	good := domain.ClaimRecord{ResourceType: domain.ResourceEvent, ResourceID: "memo-ok", OwnerID: "w1",
		LeaseExpiresAt: now.Add(time.Minute), HeartbeatAt: now, ClaimVersion: 1}
	require.NoError(t, validateAcquire(&good))
	require.True(t, knownIdentities.has(claimIdentity{good.ResourceType, good.ResourceID, good.OwnerID}))

	bad := good
	bad.ResourceType = "TICKET"
	for range 2 {
		err := validateAcquire(&bad)
		var ve *schemas.ValidationError
		require.ErrorAs(t, err, &ve)
		require.Equal(t, "/resource_type", ve.Violations[0].Pointer)
	}
	require.False(t, knownIdentities.has(claimIdentity{bad.ResourceType, bad.ResourceID, bad.OwnerID}))

	late := good
	late.LeaseExpiresAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	require.Error(t, validateAcquire(&late), "a known identity does not excuse its times")

	small := identityMemo{limit: 2}
	for _, id := range []string{"a", "b", "c"} {
		small.add(claimIdentity{domain.ResourceEvent, id, "w1"})
	}
	require.True(t, small.has(claimIdentity{domain.ResourceEvent, "c", "w1"}))
	require.LessOrEqual(t, len(small.m), 2, "the memo stays bounded")
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
