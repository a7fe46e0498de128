package schemas_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/schemas"
)

const testdata = "testdata"

// fixtureSet lists one kind's fixtures.
type fixtureSet struct {
	valid   []string
	invalid []string
	expect  map[string]string
}

func loadFixtures(t *testing.T, kind schemas.Kind) fixtureSet {
	t.Helper()
	dir := filepath.Join(testdata, string(kind))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err, "kind %s has no testdata directory", kind)
	var fs fixtureSet
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, "valid") && strings.HasSuffix(name, ".json"):
			fs.valid = append(fs.valid, name)
		case strings.HasPrefix(name, "invalid_") && strings.HasSuffix(name, ".json"):
			fs.invalid = append(fs.invalid, name)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "expect.json"))
	require.NoError(t, err, "kind %s has no expect.json", kind)
	require.NoError(t, json.Unmarshal(data, &fs.expect))
	return fs
}

func readFixture(t *testing.T, kind schemas.Kind, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testdata, string(kind), name))
	require.NoError(t, err)
	return data
}

func requireViolation(t *testing.T, err error, kind schemas.Kind, pointer string) *schemas.ValidationError {
	t.Helper()
	require.Error(t, err)
	var ve *schemas.ValidationError
	require.ErrorAs(t, err, &ve)
	require.Equal(t, kind, ve.Kind)
	var pointers []string
	for _, v := range ve.Violations {
		require.NotEmpty(t, v.Pointer)
		require.NotEmpty(t, v.Message)
		pointers = append(pointers, v.Pointer)
	}
	require.Contains(t, pointers, pointer, "error: %v", err)
	require.Contains(t, err.Error(), pointer+": ")
	require.True(t, strings.HasPrefix(err.Error(), "invalid "+string(kind)+": "), err.Error())
	return ve
}

func TestEveryKindHasSchemaAndFixtures(t *testing.T) {
	t.Parallel()
	kinds := schemas.Kinds()
	require.Len(t, kinds, 31)
	require.True(t, slices.IsSorted(kinds))

	for _, kind := range kinds {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			src, err := schemas.Source(kind)
			require.NoError(t, err)
			var doc map[string]any
			require.NoError(t, json.Unmarshal(src, &doc))
			require.Equal(t, "https://json-schema.org/draft/2020-12/schema", doc["$schema"])
			require.Equal(t, "https://azolla.dev/schemas/"+string(kind)+".schema.json", doc["$id"])
			require.NotEmpty(t, doc["title"])
			require.NotEmpty(t, doc["description"])
			require.Equal(t, "object", doc["type"])
			require.Equal(t, false, doc["additionalProperties"])
			required, ok := doc["required"].([]any)
			require.True(t, ok, "required list")
			props, ok := doc["properties"].(map[string]any)
			require.True(t, ok, "properties")
			for _, r := range required {
				require.Contains(t, props, r, "required property %v is not declared", r)
			}
			for name, p := range props {
				pm, ok := p.(map[string]any)
				require.True(t, ok, name)
				require.NotEmpty(t, pm["description"], "property %s lacks a description", name)
			}

			fs := loadFixtures(t, kind)
			require.NotEmpty(t, fs.valid, "no valid fixture")
			require.GreaterOrEqual(t, len(fs.invalid), 3, "fewer than 3 invalid fixtures")
			expected := make([]string, 0, len(fs.expect))
			for name := range fs.expect {
				expected = append(expected, name)
			}
			slices.Sort(expected)
			require.Equal(t, fs.invalid, expected, "expect.json must name exactly the invalid fixtures")
		})
	}
}

func TestSchemaFilesAndTestdataMatchKinds(t *testing.T) {
	t.Parallel()
	known := map[string]bool{}
	for _, k := range schemas.Kinds() {
		known[string(k)] = true
	}
	files, err := filepath.Glob("*.schema.json")
	require.NoError(t, err)
	for _, f := range files {
		name := strings.TrimSuffix(f, ".schema.json")
		if name == "defs" {
			continue
		}
		require.True(t, known[name], "schema file %s names no kind", f)
	}
	dirs, err := os.ReadDir(testdata)
	require.NoError(t, err)
	for _, d := range dirs {
		require.True(t, d.IsDir() && known[d.Name()], "testdata/%s names no kind", d.Name())
	}
}

func TestValidFixtures(t *testing.T) {
	t.Parallel()
	for _, kind := range schemas.Kinds() {
		for _, name := range loadFixtures(t, kind).valid {
			t.Run(string(kind)+"/"+name, func(t *testing.T) {
				t.Parallel()
				require.NoError(t, schemas.ValidateJSON(kind, readFixture(t, kind, name)))
			})
		}
	}
}

func TestInvalidFixtures(t *testing.T) {
	t.Parallel()
	for _, kind := range schemas.Kinds() {
		fs := loadFixtures(t, kind)
		for _, name := range fs.invalid {
			pointer := fs.expect[name]
			t.Run(string(kind)+"/"+name, func(t *testing.T) {
				t.Parallel()
				require.NotEmpty(t, pointer, "expect.json lacks %s", name)
				err := schemas.ValidateJSON(kind, readFixture(t, kind, name))
				requireViolation(t, err, kind, pointer)
			})
		}
	}
}

func ptr[T any](v T) *T { return &v }

// records returns a valid value of every store record type.
func records() map[string]struct {
	kind  schemas.Kind
	value any
} {
	now := time.Now().UTC().Truncate(time.Microsecond)
	later := now.Add(90 * time.Second)
	sha := "3f786850e387550fdab836ed7e6dc881de23001b"
	type rec = struct {
		kind  schemas.Kind
		value any
	}
	return map[string]rec{
		"objective": {schemas.Objective, &domain.Objective{
			ObjectiveID: "objective-abc_1", ObjectiveType: "TICKET", Title: "Add retry",
			AcceptanceCriteria: []string{"retries 3 times"}, Status: domain.StatusTodo, StatusSeq: 1,
			Blockers: []string{}, Urgency: "HIGH", DueAt: ptr(later), Repository: "github.com/azolla/azolla",
			BaseBranch: "main", CreatedAt: now, UpdatedAt: later,
		}},
		"objective_nil_slices": {schemas.Objective, domain.Objective{
			ObjectiveID: "o1", ObjectiveType: "TRIAGE", Title: "Triage", Status: domain.StatusBlocked,
			BlockerRef: "o2", Urgency: "LOW", CreatedAt: now, UpdatedAt: now,
		}},
		"event_unprocessed": {schemas.Event, domain.Event{
			EventID: "evt-1", EventType: domain.EventTicketReady, SubjectID: "objective-abc_1",
			TransitionSeq: 1, CreatedAt: now,
		}},
		"event_processed": {schemas.Event, domain.Event{
			EventID: "evt-1", EventType: domain.EventCaptureReady, SubjectID: "cap-1", TransitionSeq: 0,
			Processed: true, ProcessedReason: domain.ReasonScheduled, ProcessedAt: ptr(later), CreatedAt: now,
		}},
		"context_snapshot": {schemas.ContextSnapshot, domain.ContextSnapshot{
			ContextSnapshotID: "ctx-1", ObjectiveID: "objective-abc_1", FullPromptText: "do it",
			Metadata:         domain.SnapshotMetadata{CommitSHA: sha, BaseBranch: "main"},
			RelatedYieldRefs: []domain.YieldRef{{Kind: domain.YieldPreviousAttempt, Ref: "wo-1", GateResult: domain.GateFail}},
			CreatedAt:        now,
		}},
		"context_snapshot_empty": {schemas.ContextSnapshot, domain.ContextSnapshot{
			ContextSnapshotID: "ctx-1", ObjectiveID: "o1", FullPromptText: "do it", CreatedAt: now,
		}},
		"workorder_created": {schemas.WorkOrder, domain.WorkOrder{
			WorkOrderID: "wo-1", EventID: "evt-1", ObjectiveID: "objective-abc_1", DiazotrophType: "PATCH_DIAZOTROPH",
			ContextSnapshotID: "ctx-1", BranchName: "azolla/objective-abc_1", BudgetMS: 60000,
			Status: domain.WorkOrderCreated, CreatedAt: now,
		}},
		"workorder_executed": {schemas.WorkOrder, domain.WorkOrder{
			WorkOrderID: "wo-1", EventID: "evt-1", ObjectiveID: "objective-abc_1", DiazotrophType: "COMMAND_DIAZOTROPH",
			ContextSnapshotID: "ctx-1", BranchName: "azolla/objective-abc_1", BudgetMS: 1,
			Status: domain.WorkOrderExecuted, CreatedAt: now, ExecutedAt: ptr(later),
		}},
		"output_bundle": {schemas.OutputBundle, domain.OutputBundle{
			WorkOrderID: "wo-1", Title: "Add retry", Content: "diff", Notes: "",
			Metadata:     domain.BundleMetadata{BranchName: "azolla/objective-abc_1", PRDescriptionDraft: "Adds retry.", CommitSHA: sha},
			RunnerStatus: domain.RunnerOK, CreatedAt: now,
		}},
		"run_record": {schemas.RunRecord, domain.RunRecord{
			WorkOrderID: "wo-1", ObjectiveID: "objective-abc_1", GateResult: domain.GatePass, GateReason: "tests passed",
			CommitSHA: sha, CreatedAt: now, UpdatedAt: later,
		}},
		"pause_state": {schemas.PauseState, domain.PauseState{
			PauseStateID: "pause-1", ObjectiveID: "objective-abc_1", WorkOrderID: "wo-1", Reason: domain.PauseGateFailed,
			PrioritizedActions: []string{"read the gate reason"}, CreatedAt: now,
		}},
		"claim_record_held": {schemas.ClaimRecord, domain.ClaimRecord{
			ResourceType: domain.ResourceEvent, ResourceID: "evt-1", OwnerID: "12345@host:azolla/objective-abc/3",
			LeaseExpiresAt: later, HeartbeatAt: now, ClaimVersion: 0,
		}},
		"claim_record_released": {schemas.ClaimRecord, domain.ClaimRecord{
			ResourceType: domain.ResourceWorkOrder, ResourceID: "wo-1", OwnerID: "12345@host:azolla/objective-abc/3",
			LeaseExpiresAt: now, HeartbeatAt: now, ClaimVersion: 7, ReleasedAt: ptr(now),
		}},
		"pull_request": {schemas.PullRequest, domain.PullRequest{
			ObjectiveID: "objective-abc_1", WorkOrderID: "wo-1", Forge: forge.KindGitHub, Repository: "azolla/azolla",
			Number: 12, URL: "https://github.com/azolla/azolla/pull/12", HeadBranch: "azolla/objective-abc_1",
			BaseBranch: "main", HeadSHA: sha, State: domain.PullRequestOpen, Rounds: 1, CreatedAt: now, UpdatedAt: now,
		}},
		"pull_request_merged": {schemas.PullRequest, domain.PullRequest{
			ObjectiveID: "objective-abc_1", WorkOrderID: "wo-2", Forge: forge.KindGitLab, Repository: "group/sub/azolla",
			Number: 3, URL: "https://gitlab.example.org/group/sub/azolla/-/merge_requests/3", HeadBranch: "azolla/objective-abc_1",
			BaseBranch: "main", HeadSHA: sha, State: domain.PullRequestMerged, Adopted: true, ReviewCursor: "n:1093",
			ChecksSHA: sha, Rounds: 2, CreatedAt: now, UpdatedAt: later, MergedAt: ptr(later),
		}},
		"capture_buffer": {schemas.CaptureBuffer, domain.CaptureBuffer{
			CaptureBufferID: "cap-1", Source: "cli", Content: "the fetcher should retry",
			Status: domain.CapturePending, CreatedAt: now, UpdatedAt: now,
		}},
	}
}

func TestStoreRecordsRoundTrip(t *testing.T) {
	t.Parallel()
	for name, r := range records() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			require.NoError(t, schemas.Validate(r.kind, r.value))
		})
	}
}

func TestStoreRecordsMutatedInvalid(t *testing.T) {
	t.Parallel()
	recs := records()
	nonUTC := time.Now().In(time.FixedZone("X", 2*3600)).Truncate(time.Microsecond)
	cases := []struct {
		name    string
		base    string
		mutate  func(v any) any
		pointer string
	}{
		{"objective traversal id", "objective", func(v any) any {
			o := *v.(*domain.Objective)
			o.ObjectiveID = "../evil"
			return o
		}, "/objective_id"},
		{"objective non-UTC time", "objective", func(v any) any {
			o := *v.(*domain.Objective)
			o.UpdatedAt = nonUTC
			return o
		}, "/updated_at"},
		{"objective empty title", "objective_nil_slices", func(v any) any {
			o := v.(domain.Objective)
			o.Title = ""
			return o
		}, "/title"},
		{"event processed without reason", "event_processed", func(v any) any {
			e := v.(domain.Event)
			e.ProcessedReason = ""
			return e
		}, "/processed_reason"},
		{"event unprocessed with time", "event_unprocessed", func(v any) any {
			e := v.(domain.Event)
			e.ProcessedAt = ptr(e.CreatedAt)
			return e
		}, "/processed_at"},
		{"snapshot objective with dots", "context_snapshot", func(v any) any {
			c := v.(domain.ContextSnapshot)
			c.ObjectiveID = "a..b"
			return c
		}, "/objective_id"},
		{"workorder executed without time", "workorder_executed", func(v any) any {
			w := v.(domain.WorkOrder)
			w.ExecutedAt = nil
			return w
		}, "/executed_at"},
		{"workorder created with time", "workorder_created", func(v any) any {
			w := v.(domain.WorkOrder)
			w.ExecutedAt = ptr(w.CreatedAt)
			return w
		}, "/executed_at"},
		{"bundle bad branch", "output_bundle", func(v any) any {
			b := v.(domain.OutputBundle)
			b.Metadata.BranchName = "main"
			return b
		}, "/metadata/branch_name"},
		{"run record bad result", "run_record", func(v any) any {
			r := v.(domain.RunRecord)
			r.GateResult = "MAYBE"
			return r
		}, "/gate_result"},
		{"pause state without actions", "pause_state", func(v any) any {
			p := v.(domain.PauseState)
			p.PrioritizedActions = nil
			return p
		}, "/prioritized_actions"},
		{"claim negative version", "claim_record_held", func(v any) any {
			c := v.(domain.ClaimRecord)
			c.ClaimVersion = -1
			return c
		}, "/claim_version"},
		{"claim empty owner", "claim_record_released", func(v any) any {
			c := v.(domain.ClaimRecord)
			c.OwnerID = ""
			return c
		}, "/owner_id"},
		{"pull request merged without time", "pull_request_merged", func(v any) any {
			p := v.(domain.PullRequest)
			p.MergedAt = nil
			return p
		}, "/merged_at"},
		{"pull request open with merge time", "pull_request", func(v any) any {
			p := v.(domain.PullRequest)
			p.MergedAt = ptr(p.CreatedAt)
			return p
		}, "/merged_at"},
		{"pull request number zero", "pull_request", func(v any) any {
			p := v.(domain.PullRequest)
			p.Number = 0
			return p
		}, "/number"},
		{"pull request no rounds", "pull_request", func(v any) any {
			p := v.(domain.PullRequest)
			p.Rounds = 0
			return p
		}, "/rounds"},
		{"pull request unknown forge", "pull_request", func(v any) any {
			p := v.(domain.PullRequest)
			p.Forge = "bitbucket"
			return p
		}, "/forge"},
		{"capture bad status", "capture_buffer", func(v any) any {
			c := v.(domain.CaptureBuffer)
			c.Status = "DONE"
			return c
		}, "/status"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base, ok := recs[tc.base]
			require.True(t, ok, tc.base)
			requireViolation(t, schemas.Validate(base.kind, tc.mutate(base.value)), base.kind, tc.pointer)
		})
	}
}

func TestErrorMessageNamesEveryField(t *testing.T) {
	t.Parallel()
	doc := `{"objective_id":"o1","objective_type":"TICKET","acceptance_criteria":[],"status":"WAITING",
		"status_seq":0,"blockers":[],"urgency":"LOW","created_at":"2026-11-21T17:41:58Z",
		"updated_at":"2026-11-21T17:41:58Z","colour":"green"}`
	err := schemas.ValidateJSON(schemas.Objective, []byte(doc))
	var ve *schemas.ValidationError
	require.ErrorAs(t, err, &ve)
	require.Equal(t, []schemas.Violation{
		{Pointer: "/colour", Message: "property is not allowed"},
		{Pointer: "/status", Message: `value must be one of "NEW", "TODO", "IN_PROGRESS", "DONE", "BLOCKED"`},
		{Pointer: "/title", Message: "required property is missing"},
	}, ve.Violations)
	require.Equal(t, `invalid objective: /colour: property is not allowed; `+
		`/status: value must be one of "NEW", "TODO", "IN_PROGRESS", "DONE", "BLOCKED"; `+
		`/title: required property is missing`, err.Error())
}

func TestConditionalViolationsNamePointers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		kind schemas.Kind
		doc  string
		want schemas.Violation
	}{
		{schemas.Event, `{"event_id":"e","event_type":"TICKET_READY","subject_id":"o","transition_seq":0,
			"processed":true,"processed_at":"2026-11-21T17:41:58Z","created_at":"2026-11-21T17:41:58Z"}`,
			schemas.Violation{Pointer: "/processed_reason", Message: "required property is missing"}},
		{schemas.Event, `{"event_id":"e","event_type":"TICKET_READY","subject_id":"o","transition_seq":0,
			"processed":false,"processed_reason":"SCHEDULED","created_at":"2026-11-21T17:41:58Z"}`,
			schemas.Violation{Pointer: "/processed_reason", Message: "property is not allowed here"}},
		{schemas.JobAttempt, `{"attempt_id":"0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d","job_id":"0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d",
			"worker_id":"w","attempt_number":1,"status":"RUNNING","stream":"s","message_id":"1-0","started_at":"2026-11-21T17:41:58Z",
			"finished_at":"2026-11-21T17:41:58Z"}`,
			schemas.Violation{Pointer: "/finished_at", Message: "property is not allowed here"}},
	}
	for _, tc := range cases {
		t.Run(string(tc.kind)+tc.want.Pointer, func(t *testing.T) {
			t.Parallel()
			err := schemas.ValidateJSON(tc.kind, []byte(tc.doc))
			ve := requireViolation(t, err, tc.kind, tc.want.Pointer)
			require.Equal(t, []schemas.Violation{tc.want}, ve.Violations)
		})
	}
}

func TestViolationPointersAreEscaped(t *testing.T) {
	t.Parallel()
	doc := `{"job_id":"0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d","attempt_id":"0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d",
		"worker_id":"w","lease_token":"BwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyAhIiMkJSY","lease_expires_at":"2026-11-21T17:41:58Z",
		"heartbeat_at":"2026-11-21T17:41:58Z","created_at":"2026-11-21T17:41:58Z",
		"a/b~c":1,"it's \"q\"":2,"x y%":3}`
	err := schemas.ValidateJSON(schemas.JobLease, []byte(doc))
	var ve *schemas.ValidationError
	require.ErrorAs(t, err, &ve)
	var pointers []string
	for _, v := range ve.Violations {
		pointers = append(pointers, v.Pointer)
	}
	require.Equal(t, []string{"/a~1b~0c", `/it's "q"`, "/x y%"}, pointers)
}

func TestRootViolation(t *testing.T) {
	t.Parallel()
	err := schemas.ValidateJSON(schemas.CaptureBuffer, []byte(`"just a string"`))
	ve := requireViolation(t, err, schemas.CaptureBuffer, "/")
	require.Len(t, ve.Violations, 1)
}

func TestParseKind(t *testing.T) {
	t.Parallel()
	for _, k := range schemas.Kinds() {
		got, err := schemas.ParseKind(string(k))
		require.NoError(t, err)
		require.Equal(t, k, got)
	}
	for _, s := range []string{"", "objectives", "defs", "Objective", "../objective"} {
		_, err := schemas.ParseKind(s)
		require.ErrorIs(t, err, schemas.ErrUnknownKind, s)
		require.Contains(t, err.Error(), "workorder", "the error lists the valid kinds")
	}
}

func TestUnknownKind(t *testing.T) {
	t.Parallel()
	_, err := schemas.Source("defs")
	require.ErrorIs(t, err, schemas.ErrUnknownKind)
	err = schemas.ValidateJSON("nope", []byte(`{}`))
	require.ErrorIs(t, err, schemas.ErrUnknownKind)
	err = schemas.Validate("nope", struct{}{})
	require.ErrorIs(t, err, schemas.ErrUnknownKind)
}

func TestInvalidJSON(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{``, `{`, `{"a":1}}`, `{"a":1} {"b":2}`, `nope`} {
		err := schemas.ValidateJSON(schemas.Objective, []byte(doc))
		require.Error(t, err, doc)
		var ve *schemas.ValidationError
		require.False(t, errors.As(err, &ve), "%q: %v", doc, err)
		require.Contains(t, err.Error(), "invalid JSON", doc)
	}
}

func TestValidateMarshalError(t *testing.T) {
	t.Parallel()
	err := schemas.Validate(schemas.Objective, map[string]any{"f": func() {}})
	require.Error(t, err)
	var ve *schemas.ValidationError
	require.False(t, errors.As(err, &ve))
}

// TestPullRequestForgesAreTheForgeKinds holds the schema's forge enum to
// package forge's kinds, the one home of the list.
func TestPullRequestForgesAreTheForgeKinds(t *testing.T) {
	t.Parallel()
	src, err := schemas.Source(schemas.PullRequest)
	require.NoError(t, err)
	var doc struct {
		Properties struct {
			Forge struct {
				Enum []string `json:"enum"`
			} `json:"forge"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(src, &doc))
	require.ElementsMatch(t, []string{forge.KindGitea, forge.KindGitHub, forge.KindGitLab}, doc.Properties.Forge.Enum)
}

// TestPullRequestStatesAreTheSchemas holds store.PullRequestStates to the
// schema's state enum.
func TestPullRequestStatesAreTheSchemas(t *testing.T) {
	t.Parallel()
	src, err := schemas.Source(schemas.PullRequest)
	require.NoError(t, err)
	var doc struct {
		Properties struct {
			State struct {
				Enum []domain.PullRequestState `json:"enum"`
			} `json:"state"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(src, &doc))
	require.ElementsMatch(t, domain.PullRequestStates(), doc.Properties.State.Enum)
}
