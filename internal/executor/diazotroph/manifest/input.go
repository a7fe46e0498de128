package manifest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
)

// InputFormat names and versions the document carried in full_prompt_text.
const InputFormat = "azolla.manifest_input/v1"

// The substrate queries the report reads; see the package doc.
const (
	QueryObjectivesByStatus = "objectives_by_status"
	QueryBlockedObjectives  = "blocked_objectives"
	QueryOverdueObjectives  = "overdue_objectives"
	QueryHumanPauseStates   = "human_pause_states"
	QueryRecentRunRecords   = "recent_run_records"
	QueryPullRequests       = "pull_requests"
	QueryRunSpend           = "run_spend"
)

// queriesRead are the queries the report reads, in the order their notes
// come.
var queriesRead = []string{QueryObjectivesByStatus, QueryBlockedObjectives, QueryOverdueObjectives,
	QueryHumanPauseStates, QueryRecentRunRecords, QueryPullRequests, QueryRunSpend}

// ParamTableAbsent is a query parameter: "true" says the substrate has no
// table for the query (its store predates the table), so the query's
// empty rows mean "not kept there", not "none".
const ParamTableAbsent = "table_absent"

// ErrInvalidInput is wrapped by every error about a snapshot whose
// full_prompt_text is not a manifest input.
var ErrInvalidInput = errors.New("invalid manifest input")

// Input is what one manifest run reads, frozen in the snapshot.
type Input struct {
	Format string `json:"format"`
	// Scope is what the manifest was requested for (manifest request
	// --scope); "" for everything.
	Scope string `json:"scope,omitempty"`
	// Now is the time the queries ran; the report judges by it.
	Now time.Time `json:"now"`
	// LastManifestAt is when the previous manifest was written, if any.
	LastManifestAt *time.Time    `json:"last_manifest_at,omitempty"`
	Queries        []QueryResult `json:"queries"`
}

// QueryResult is one named substrate query and what it returned.
type QueryResult struct {
	Name       string            `json:"name"`
	Version    int               `json:"version"`
	Substrate  string            `json:"substrate,omitempty"`
	Parameters map[string]string `json:"parameters"`
	Rows       []json.RawMessage `json:"rows"`
}

// ContentHash is "sha256:" and the hex SHA-256 of the rows as one compact
// JSON array, the same however the rows were indented.
func (q QueryResult) ContentHash() (string, error) {
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, r := range q.Rows {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := json.Compact(&buf, r); err != nil {
			return "", fmt.Errorf("hash query %s: row %d: %w", q.Name, i, err)
		}
	}
	buf.WriteByte(']')
	sum := sha256.Sum256(buf.Bytes())
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// ObjectiveRow is a row of the objective queries: the fields of an
// objective record the report uses, plus the deadline of an overdue one.
type ObjectiveRow struct {
	ObjectiveID string     `json:"objective_id"`
	Title       string     `json:"title"`
	Status      string     `json:"status"`
	Urgency     string     `json:"urgency"`
	Blockers    []string   `json:"blockers,omitempty"`
	BlockerRef  string     `json:"blocker_ref,omitempty"`
	DueAt       *time.Time `json:"due_at,omitempty"`
	Deadline    *time.Time `json:"deadline,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
}

// PauseRow is a row of human_pause_states, a pause state record.
type PauseRow struct {
	PauseStateID       string    `json:"pause_state_id"`
	ObjectiveID        string    `json:"objective_id,omitempty"`
	WorkOrderID        string    `json:"work_order_id,omitempty"`
	Reason             string    `json:"reason"`
	PrioritizedActions []string  `json:"prioritized_actions"`
	CreatedAt          time.Time `json:"created_at"`
}

// RunRow is a row of recent_run_records, a run record.
type RunRow struct {
	WorkOrderID string    `json:"work_order_id"`
	ObjectiveID string    `json:"objective_id"`
	GateResult  string    `json:"gate_result"`
	GateReason  string    `json:"gate_reason"`
	CreatedAt   time.Time `json:"created_at"`
}

// PullRequestRow is a row of pull_requests, an objective's pull request
// record.
type PullRequestRow struct {
	ObjectiveID string `json:"objective_id"`
	Number      int    `json:"number"`
	URL         string `json:"url"`
	// State is OPEN, MERGED or CLOSED (closed without merge).
	State string `json:"state"`
	// Rounds counts the revision rounds started on it, the first included.
	Rounds    int        `json:"rounds"`
	UpdatedAt time.Time  `json:"updated_at"`
	MergedAt  *time.Time `json:"merged_at,omitempty"`
	ClosedAt  *time.Time `json:"closed_at,omitempty"`
}

// SpendRow is a row of run_spend: one run of the lookback that could cost
// (store.Spend.Add counts it), an output bundle's or a best-of-N
// candidate's, with the repository of its objective.
type SpendRow struct {
	WorkOrderID string `json:"work_order_id"`
	// ObjectiveID is "" for a track's workorder (triage, manifest).
	ObjectiveID string `json:"objective_id,omitempty"`
	// Repository is the objective's; "" when it names none.
	Repository string `json:"repository,omitempty"`
	// Generator is the bundle's (store.BundleMetadata.Generator) or the
	// candidate's.
	Generator string `json:"generator,omitempty"`
	// RunReport is the part of the bundle's run report a spend reads; nil
	// when the run wrote none.
	RunReport *SpendReport `json:"run_report,omitempty"`
	CreatedAt time.Time    `json:"created_at"`
}

// SpendReport is what a spend reads of a run report (runreport.Report):
// no summary, no transcript.
type SpendReport struct {
	Model   string         `json:"model,omitempty"`
	CostUSD *float64       `json:"cost_usd,omitempty"`
	Tokens  *domain.Tokens `json:"tokens,omitempty"`
}

// SpendReportOf is the part of r a spend reads; nil for nil.
func SpendReportOf(r *domain.RunReport) *SpendReport {
	if r == nil {
		return nil
	}
	return &SpendReport{Model: r.Model, CostUSD: r.CostUSD, Tokens: r.Tokens}
}

// Rows returns a query result whose rows are the JSON of each of rows (store
// records or the row types above).
func Rows[T any](name string, version int, params map[string]string, rows []T) (QueryResult, error) {
	q := QueryResult{Name: name, Version: version, Parameters: params, Rows: make([]json.RawMessage, 0, len(rows))}
	if q.Parameters == nil {
		q.Parameters = map[string]string{}
	}
	for i, r := range rows {
		b, err := json.Marshal(r)
		if err != nil {
			return QueryResult{}, fmt.Errorf("query %s: row %d: %w", name, i, err)
		}
		q.Rows = append(q.Rows, b)
	}
	return q, nil
}

// EncodeInput returns in as the snapshot's full_prompt_text.
func EncodeInput(in Input) (string, error) { return diazotroph.EncodeInput(in, Input.check) }

// DecodeInput reads the input from a snapshot's full_prompt_text. It
// refuses another format, unknown fields, trailing data, a zero "now" and a
// query name given twice.
func DecodeInput(text string) (Input, error) {
	return diazotroph.DecodeInput(text, ErrInvalidInput, Input.check)
}

func (in Input) check() error {
	if in.Format != InputFormat {
		return fmt.Errorf("%w: format %q, want %q", ErrInvalidInput, in.Format, InputFormat)
	}
	if in.Now.IsZero() {
		return fmt.Errorf("%w: no \"now\"", ErrInvalidInput)
	}
	seen := map[string]bool{}
	for i, q := range in.Queries {
		if q.Name == "" {
			return fmt.Errorf("%w: query %d has no name", ErrInvalidInput, i)
		}
		if seen[q.Name] {
			return fmt.Errorf("%w: query %q given twice", ErrInvalidInput, q.Name)
		}
		seen[q.Name] = true
	}
	return nil
}
