package audit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// state is everything the rules look at, read once.
type state struct {
	now   time.Time
	grace time.Duration

	objectives []*domain.Objective
	events     []*domain.Event
	event      map[string]*domain.Event
	workOrders []*domain.WorkOrder
	workOrder  map[string]*domain.WorkOrder
	// byEvent and byObjective index workOrders by event_id and objective_id.
	byEvent     map[string][]*domain.WorkOrder
	byObjective map[string][]*domain.WorkOrder
	// bundle and runRecord are what the store returns per existing workorder.
	bundle    map[string]*domain.OutputBundle
	runRecord map[string]*domain.RunRecord
	pauses    []*domain.PauseState
	claims    []*domain.ClaimRecord
	captures  []*domain.CaptureBuffer
	// failedTriage counts, per capture_buffer_id, the triage workorders
	// with a FAIL run_record whose snapshot names the capture.
	failedTriage map[string]int
	// pullRequests, in (created_at, objective_id) order, and the feedback
	// judged on them, by objective in that order.
	pullRequests []*domain.PullRequest
	feedback     []*domain.PullRequestFeedback
	// candidates are each workorder's candidates, by attempt;
	// candidateRows counts the candidate rows per work_order_id, those of
	// workorders that are gone included (nil without SQL).
	candidates    map[string][]*domain.Candidate
	candidateRows map[string]int
	// intake are the items taken from outside the CLI; commands the
	// command comments given on their objectives.
	intake   []*domain.IntakeItem
	commands []*domain.ForgeCommand

	// bundleRows and runRecordRows count the rows each work_order_id has in
	// its table, including rows whose workorder is gone. They are nil when
	// the store offers no SQL; counts then come from bundle and runRecord.
	bundleRows, runRecordRows map[string]int

	// jobs, in (created_at, job_id) order, with their attempts and leases
	// by job_id; empty when the store offers no jobs.
	jobs     []*domain.Job
	attempts map[string][]*domain.JobAttempt
	leases   map[string][]*domain.JobLease
	// messagesRead is set when a transport was asked about the message of
	// each of the messagesChecked RUNNING attempts; lostMessages are those
	// it no longer holds pending.
	messagesRead    bool
	messagesChecked int
	lostMessages    []lostMessage
}

// sqlDB is what a SQL-backed store offers for read-only queries.
type sqlDB interface{ DB() *sql.DB }

func load(ctx context.Context, q Reader) (*state, error) {
	s := &state{event: map[string]*domain.Event{}, workOrder: map[string]*domain.WorkOrder{},
		byEvent: map[string][]*domain.WorkOrder{}, byObjective: map[string][]*domain.WorkOrder{},
		bundle: map[string]*domain.OutputBundle{}, runRecord: map[string]*domain.RunRecord{}}
	var err error
	if s.objectives, err = q.ListObjectives(ctx, store.ListObjectivesParams{}); err != nil {
		return nil, err
	}
	if s.events, err = q.ListEvents(ctx, store.ListEventsParams{}); err != nil {
		return nil, err
	}
	for _, e := range s.events {
		s.event[e.EventID] = e
	}
	if s.workOrders, err = q.ListWorkOrders(ctx, store.ListWorkOrdersParams{}); err != nil {
		return nil, err
	}
	for _, w := range s.workOrders {
		s.workOrder[w.WorkOrderID] = w
		s.byEvent[w.EventID] = append(s.byEvent[w.EventID], w)
		s.byObjective[w.ObjectiveID] = append(s.byObjective[w.ObjectiveID], w)
		if err := s.loadOutcome(ctx, q, w.WorkOrderID); err != nil {
			return nil, err
		}
	}
	if err := s.loadPauses(ctx, q); err != nil {
		return nil, err
	}
	if s.claims, err = q.ListClaims(ctx, store.ListClaimsParams{}); err != nil {
		return nil, err
	}
	if s.captures, err = q.ListCaptureBuffers(ctx, store.ListCaptureBuffersParams{}); err != nil {
		return nil, err
	}
	if err := s.loadFailedTriage(ctx, q); err != nil {
		return nil, err
	}
	if err := s.loadPullRequests(ctx, q); err != nil {
		return nil, err
	}
	if err := s.loadCandidates(ctx, q); err != nil {
		return nil, err
	}
	if err := s.loadIntake(ctx, q); err != nil {
		return nil, err
	}
	if db, ok := q.(sqlDB); ok {
		if s.bundleRows, err = countRows(ctx, db.DB(), "output_bundles"); err != nil {
			return nil, err
		}
		if s.runRecordRows, err = countRows(ctx, db.DB(), "run_records"); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// loadOutcome reads a workorder's bundle and run record, if any.
func (s *state) loadOutcome(ctx context.Context, q store.RunQuerier, id string) error {
	b, err := q.GetOutputBundle(ctx, id)
	switch {
	case err == nil:
		s.bundle[id] = b
	case !errors.Is(err, domain.ErrNotFound):
		return err
	}
	rr, err := q.GetRunRecord(ctx, id)
	switch {
	case err == nil:
		s.runRecord[id] = rr
	case !errors.Is(err, domain.ErrNotFound):
		return err
	}
	return nil
}

// loadPauses lists every pause state: objectives' (including ones of
// objectives the store no longer has) and triage and manifest runs'.
func (s *state) loadPauses(ctx context.Context, q store.PauseQuerier) error {
	const page = 1000
	for after := (domain.Cursor{}); ; {
		ps, err := q.ListPauseStatesPage(ctx, store.ListPauseStatesParams{After: after, Limit: page})
		if err != nil {
			return err
		}
		s.pauses = append(s.pauses, ps...)
		if len(ps) < page {
			return nil
		}
		last := ps[len(ps)-1]
		after = domain.Cursor{CreatedAt: last.CreatedAt, ID: last.PauseStateID}
	}
}

// countRows counts table's rows per work_order_id. table is one of a few
// constants, never input.
func countRows(ctx context.Context, db *sql.DB, table string) (map[string]int, error) {
	rows, err := db.QueryContext(ctx, `SELECT work_order_id, COUNT(*) FROM `+table+` GROUP BY work_order_id`)
	if err != nil {
		return nil, fmt.Errorf("count %s rows: %w", table, err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, fmt.Errorf("count %s rows: %w", table, err)
		}
		out[id] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count %s rows: %w", table, err)
	}
	return out, nil
}

// bundleCount is the number of output_bundles of workorder id.
func (s *state) bundleCount(id string) int {
	if s.bundleRows != nil {
		return s.bundleRows[id]
	}
	if s.bundle[id] != nil {
		return 1
	}
	return 0
}

// runRecordCount is the number of run_records of workorder id.
func (s *state) runRecordCount(id string) int {
	if s.runRecordRows != nil {
		return s.runRecordRows[id]
	}
	if s.runRecord[id] != nil {
		return 1
	}
	return 0
}

// runRecordIDs returns, sorted, every work_order_id that has a run_record,
// including ids whose workorder does not exist when SQL shows them.
func (s *state) runRecordIDs() []string {
	if s.runRecordRows != nil {
		return slices.Sorted(maps.Keys(s.runRecordRows))
	}
	return slices.Sorted(maps.Keys(s.runRecord))
}

// orphanBundles returns, sorted, the work_order_ids of output_bundles whose
// workorder does not exist (visible only through SQL).
func (s *state) orphanBundles() []string {
	var out []string
	for id := range s.bundleRows {
		if s.workOrder[id] == nil {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}
