package store

import "time"

// Store retention (docs/configuration.md, store.retention): what the store
// deletes of finished work, and what it keeps.
//
// Deleted, once their use ended before PruneFinishedParams.Before:
//
//   - claims on EVENT, WORKORDER and CANDIDATE resources whose step is over
//     (the event is processed; the workorder, or the candidate's workorder,
//     has its run_record) and whose lease is not live. A claim fences the
//     one step that holds it; once the step's durable write is in, nothing
//     takes that claim again but a retry that finds the work done, which
//     acquires a fresh row. The audit's claim rules look at live claims
//     (no-live-claim-on-finished) and at the rows that exist (claim-schema):
//     a deleted, ended claim proves nothing either rule needs.
//   - job_leases of settled jobs whose outcome Temporal has been told
//     (notified_at, or no activity to tell): released or expired in the
//     settling transaction, read by job-no-live-lease-when-settled only when
//     live.
//   - job_messages of such jobs: a message left over from a requeue or a
//     duplicate enqueue of a job that is settled carries nothing to do;
//     acknowledging it would delete it too.
//
// Kept, because `azolla verify` or the history reads them: objectives,
// events (workorder-per-event, event-processed-once, capture-ready-once),
// context_snapshots (a run's frozen input; triage rounds' captures),
// workorders, output_bundles, run_records, pause_states, candidates, pull
// requests, capture_buffers, jobs and job_attempts (job-succeeded-once
// reads a SUCCEEDED job's winning attempt), and the singleton leadership
// and TRACK claims, one row each whatever the work. Transcripts have their
// own retention (patch.retention, internal/maintenance/retention).
type PruneFinishedParams struct {
	// Before is the cutoff: a row goes only if its use ended before it
	// (now minus store.retention).
	Before time.Time
	// Batch bounds the rows one statement deletes (default 500), so no
	// transaction holds the store for long.
	Batch int
}

// PruneFinishedCounts is what one PruneFinished call deleted.
type PruneFinishedCounts struct {
	Claims      int `json:"claims"`
	JobLeases   int `json:"job_leases"`
	JobMessages int `json:"job_messages"`
}

// Total is the number of rows deleted.
func (c PruneFinishedCounts) Total() int { return c.Claims + c.JobLeases + c.JobMessages }

// DefaultPruneBatch is PruneFinishedParams.Batch's default.
const DefaultPruneBatch = 500
