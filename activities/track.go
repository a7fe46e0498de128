package activities

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph/manifest"
	"github.com/azolla/azolla/internal/store"
)

// Tracks are the task-management activities (docs/protocol/tasks.md): the
// track's scheduler (track A, triage; track B, manifest) and gate, and the
// deadline monitor's scan (track C). Run is the objective's (Steps): it
// runs a track workorder as any other, its diazotroph reading nothing but
// the snapshot.
type Tracks struct {
	Base
	Claimant
	Store trackStore
	Tasks TaskOptions
}

// trackStore is what the tracks read and write: track events, the
// captures triage takes, the objectives it proposes and the deadline scan
// reads, a track workorder's round, pauses, and the EVENT, WORKORDER and
// TRACK claims. Every write of a step is in its claim's fenced
// transaction.
type trackStore interface {
	store.EventQuerier
	store.ObjectiveQuerier
	store.RunQuerier
	store.PauseQuerier
	store.CaptureQuerier
	store.ClaimQuerier
}

// trackReader reads what a track step's stored outcome is rebuilt from,
// in a transaction or out of one.
type trackReader interface {
	store.RunQuerier
	store.PauseQuerier
	store.CaptureQuerier
}

// TaskOptions configure the task-management activities (Tracks.Tasks).
// Zero values take the defaults named.
type TaskOptions struct {
	// TriageMaxCaptures and TriageMaxBytes bound one triage round's
	// snapshot (defaults 50 captures, 256 KiB of content); the captures
	// left wait for the next round.
	TriageMaxCaptures int
	TriageMaxBytes    int
	// Budget is a track workorder's budget_ms (default 1 minute).
	Budget time.Duration
	// TriageMaxFailures is tasks.triage.max_failures (default
	// triage.DefaultMaxFailures): a failed triage round hands its captures
	// back to triage only while the rounds before it failed fewer times in
	// a row, so the round after that many (the built-in fallback) is the
	// last to run without a human.
	TriageMaxFailures int
	// SLA is the time an objective of each urgency (CRITICAL, HIGH, NORMAL,
	// LOW) may take from created_at when it has no due_at (defaults 4h,
	// 24h, 72h, 168h).
	SLA map[string]time.Duration
	// Substrate runs the manifest's substrate queries; nil: a manifest
	// request is BLOCKED saying no substrate is configured.
	Substrate SubstrateQuerier
}

// SubstrateQuerier runs the manifest's named, versioned, read-only queries
// against another azolla's substrate (package substrate).
type SubstrateQuerier interface {
	// ManifestQueries runs every query the manifest reads, for scope, as
	// of now, in one read-only transaction. A substrate that cannot be
	// reached is an error wrapping substrate.ErrUnreachable.
	ManifestQueries(ctx context.Context, scope string, now time.Time) ([]manifest.QueryResult, error)
}

// TrackEvent is one event waiting on a track: a CAPTURE_READY (track A) or
// MANIFEST_REQUESTED (track B) event.
type TrackEvent struct {
	EventID   string
	EventType string
	// CreatedAt orders the events of one kind, oldest first.
	CreatedAt time.Time
}

// PendingTrackEventsInput asks for the unprocessed track events.
type PendingTrackEventsInput struct {
	// Limit bounds the answer (the oldest first); zero means 1,000.
	Limit int
}

// PendingTrackEvents lists the unprocessed CAPTURE_READY and
// MANIFEST_REQUESTED events, oldest first: what a track starting (or
// restarting) must have queued, whoever handed them over.
func (a *Tracks) PendingTrackEvents(ctx context.Context, in PendingTrackEventsInput) ([]TrackEvent, error) {
	limit := cmp.Or(in.Limit, DefaultTrackEventsLimit)
	var out []TrackEvent
	for _, typ := range domain.TrackEventTypes() {
		evs, err := a.Store.ListPendingEvents(ctx, store.PendingEventsParams{EventType: typ, Limit: limit})
		if err != nil {
			return nil, fmt.Errorf("pending %s events: %w", typ, err)
		}
		for _, e := range evs {
			out = append(out, TrackEvent{EventID: e.EventID, EventType: e.EventType, CreatedAt: e.CreatedAt})
		}
	}
	slices.SortStableFunc(out, func(x, y TrackEvent) int {
		return cmp.Or(x.CreatedAt.Compare(y.CreatedAt), strings.Compare(x.EventID, y.EventID))
	})
	return out[:min(len(out), limit)], nil
}

// TrackScheduleInput names the track event to schedule.
type TrackScheduleInput struct {
	Track   string
	EventID string
}

// TrackScheduleResult is the event's terminal outcome.
type TrackScheduleResult struct {
	EventID string
	// Reason is the event's processed_reason: SCHEDULED (WorkOrder set),
	// ALREADY_TAKEN (a capture already in a workorder: nothing created),
	// BLOCKED (an unreachable substrate: Pause set, nothing else written).
	Reason    string
	WorkOrder *WorkOrderRef
	Pause     *domain.PauseState
}

// ScheduleTrack is the scheduler of tracks A and B. It claims the event and
// the track (TRACK claim, owner "track:<event_id>", kept until the gate
// releases it). For a CAPTURE_READY event it freezes the untaken PENDING
// captures (oldest first, bounded by count and size) into a snapshot,
// creates a TRIAGE_DIAZOTROPH workorder and marks the captures taken; for a
// MANIFEST_REQUESTED event it runs the substrate queries and creates a
// MANIFEST_DIAZOTROPH workorder. Then it marks the event processed. Every
// write is one transaction fenced by the event's claim; run again it finds
// the stored outcome.
func (a *Tracks) ScheduleTrack(ctx context.Context, in TrackScheduleInput) (TrackScheduleResult, error) {
	defer alive(ctx)()
	return a.scheduleTrack(ctx, in)
}

// TrackGateInput names the track workorder to gate. RunFailure, when set,
// is why Run gave up: the verdict is FAIL.
type TrackGateInput struct {
	Track       string
	WorkOrderID string
	RunFailure  string
}

// TrackGateResult is the track workorder's verdict.
type TrackGateResult struct {
	WorkOrderID string
	GateResult  string
	GateReason  string
	// ObjectiveIDs are the objectives a triage run proposed (created NEW).
	ObjectiveIDs []string
	Pause        domain.PauseState
}

// GateTrack is the gate of tracks A and B. A triage run's proposals are
// validated against the objective schema and, in one transaction with the
// run record, created NEW, their captures PROCESSED with the objective ids
// they became, and a PROPOSALS_REVIEW pause written; a manifest run gets its
// run record and a MANIFEST_READY pause whose actions are the manifest's
// top actions. A FAIL writes the run record and a pause saying why, and
// creates nothing. Then the TRACK claim is released. Run again it returns
// the stored verdict.
func (a *Tracks) GateTrack(ctx context.Context, in TrackGateInput) (TrackGateResult, error) {
	defer alive(ctx)()
	return a.gateTrack(ctx, in)
}

// DeadlineScanInput asks for one page of the deadline scan.
type DeadlineScanInput struct {
	// AsOf is "now" for the scan: the monitor run's scheduled time, so a
	// backfill judges as the run would have.
	AsOf  time.Time
	After domain.Cursor
	// Limit bounds the objectives read; zero means 500.
	Limit int
}

// Overdue is one objective past its deadline.
type Overdue struct {
	ObjectiveID  string
	DeadlineAt   time.Time
	PauseStateID string
	// Created says this scan wrote the OVERDUE pause (an earlier one had
	// not).
	Created bool
}

// DeadlineScanResult is one page of the scan.
type DeadlineScanResult struct {
	// Scanned counts the objectives read: those past their deadline (the
	// store filters the others out).
	Scanned int
	Overdue []Overdue
	// Next is where the next page starts; nil when the scan is done.
	Next *domain.Cursor
}

// ScanDeadlines reads one page of the non-DONE objectives past their
// deadline at in.AsOf (due_at, else created_at plus its urgency's SLA) and,
// for each, writes its one OVERDUE pause state for that deadline (a
// deterministic id: a second scan writes nothing). It takes no claim: the pause's key is the
// guard.
func (a *Tracks) ScanDeadlines(ctx context.Context, in DeadlineScanInput) (DeadlineScanResult, error) {
	defer alive(ctx)()
	return a.scanDeadlines(ctx, in)
}

// AliveInterval is how often a task-management step tells Temporal it is
// alive; the workflows give those steps a heartbeat timeout of a few
// intervals, so a worker that dies in one is noticed within it, not at
// the step's start-to-close timeout.
const AliveInterval = 5 * time.Second

// alive heartbeats every AliveInterval until the returned stop is called.
// Outside an activity it does nothing.
func alive(ctx context.Context) (stop func()) {
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	return keepBeating(ctx, AliveInterval, func() { activity.RecordHeartbeat(ctx) })
}

// keepBeating calls beat every interval until ctx is done or the returned
// stop is called; stop returns once beat will not be called again.
func keepBeating(ctx context.Context, every time.Duration, beat func()) (stop func()) {
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				beat()
			}
		}
	}()
	return func() {
		close(done)
		<-exited
	}
}
