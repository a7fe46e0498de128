package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// A store seen through a clock ahead takes a lease that is live by the
// holder's clock once it has lapsed by its own, and the history records
// the time the store judged by; a clock behind waits that much longer.
func TestSkewed_ShiftsTheTimeClaimsAreJudgedBy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := NewSQLite(t)
	h := NewHistory()
	at := time.Now()
	p := store.AcquireClaimParams{ResourceType: domain.ResourceWorkOrder, ResourceID: "wo-1", OwnerID: "holder",
		TTL: time.Second, Now: at}
	_, ok, err := s.AcquireClaim(ctx, p)
	require.NoError(t, err)
	require.True(t, ok)

	behind := Skewed(h.FullStore(s), -2*time.Second)
	p.OwnerID, p.Now = "behind", at.Add(2500*time.Millisecond)
	_, ok, err = behind.AcquireClaim(ctx, p)
	require.NoError(t, err)
	require.False(t, ok, "by a clock 2 s behind the lease has 0.5 s left")

	ahead := Skewed(h.FullStore(s), 2*time.Second)
	p.OwnerID, p.Now = "ahead", at.Add(10*time.Millisecond)
	c, ok, err := ahead.AcquireClaim(ctx, p)
	require.NoError(t, err)
	require.True(t, ok, "by a clock 2 s ahead the lease has lapsed")
	require.Equal(t, "ahead", c.OwnerID)

	ops := h.Operations()
	require.Len(t, ops, 2)
	require.Equal(t, at.Add(500*time.Millisecond), ops[0].Input.(ClaimInput).At, "recorded as the store judged it")
	require.Equal(t, at.Add(2010*time.Millisecond), ops[1].Input.(ClaimInput).At)
}
