// Package controlplane is the control plane (docs/protocol/control-plane.md): remote workers with no
// inbound ports, no database and no Temporal access pull jobs over
// outbound HTTP (claim, heartbeat, complete, fail); jobs, attempts and
// leases live in the database, which is the truth; a Transport (Redis
// Streams, or the database under azolla dev) only carries "look at job X,
// enqueue E" messages, which may be duplicated, redelivered or lost.
//
// # States
//
// A job, and each of its attempts:
//
//	          claim: StartJobAttempt (enqueue_id matches, available)
//	 QUEUED ───────────────────────────────────────────────▶ RUNNING
//	   ▲                                                      │ │ │
//	   │  fail retryable, attempts < max (new enqueue,        │ │ │ complete
//	   │  available after backoff) / lease expired and        │ │ ▼
//	   └── attempts < max (new enqueue, available now) ───────┘ │ SUCCEEDED
//	                                                            │
//	      fail not retryable, or the last attempt failed or     ▼
//	      expired, or the Run activity is gone ─────────▶ DEAD_LETTERED
//	      (QUEUED too, through an attempt of the reaper's own)
//
//	attempt: RUNNING ──▶ SUCCEEDED | FAILED  (complete / fail, under its lease)
//	                 └─▶ EXPIRED             (the reaper, once the lease lapsed)
//
// At most one attempt of a job is RUNNING. Settled jobs never change again,
// but for the record that their outcome reached the Temporal activity.
//
// # Fencing
//
// A claim makes an attempt and its lease: a lease_token of 256 random
// bits, shown to the claiming worker only. Heartbeat, complete and fail
// present it; the store compares it in constant time, in the transaction
// of the write, against a live (unreleased, unexpired) lease of a RUNNING
// attempt. A wrong, released or expired token writes nothing and is
// answered 409 lease_lost. Once the reaper has expired an attempt and
// requeued its job, the old worker's token is dead: its completion is
// refused and the next attempt's stands. Complete and fail are idempotent
// by (job_id, attempt_id): a repeat with the same token gets the same
// answer and writes nothing.
//
// Every message is checked against the job row: a claim starts an attempt
// only for a QUEUED, available job whose current enqueue_id the message
// carries. A message of an unknown, settled or requeued job is stale:
// acknowledged and skipped. So a duplicated or redelivered message never
// makes a second attempt.
//
// # Acknowledgement
//
// A message is acknowledged only after the database transaction that
// settles its attempt (or expires it and requeues or dead-letters the job)
// has committed. Workers hold no Redis credentials, so an answer's ack=true
// means the control plane has acknowledged the message on the worker's
// behalf.
// If that acknowledgement itself fails, the message stays pending, comes
// back after the transport's min-idle, and is acknowledged then as stale.
//
// # Temporal
//
// A job may name a pending activity by ids (workflow, run, activity; never
// a task token). Heartbeats record its heartbeat too; an activity found
// gone refuses the worker (409 activity_cancelled). A settled outcome is
// reported after the commit and then marked notified; Temporal being
// unreachable does not change the answer to the worker.
//
// Whether the Run activity is gone for good is read from the store, not
// from Temporal: once the job's workorder has its gate's verdict (a run
// record) no outcome of the job may be written (ErrRunGone). Claims do not
// start it, heartbeats and completes are refused with 409
// activity_cancelled in the transaction that would have written, a fail
// dead-letters instead of requeueing, and the reaper dead-letters the job,
// QUEUED or expired, with code RUN_ACTIVITY_GONE. Temporal's "not found"
// is no such proof: it is also the answer between two attempts of a Run
// activity that is about to come back for the job.
//
// A candidate job (one of a best-of-N workorder's candidates, its
// payload a CandidatePayload, unique per workorder and candidate) is gone
// the same way once its candidate's record is settled: recorded DONE or
// FAILED by an earlier outcome, or CANCELLED by the selection.
//
// # What the reaper repairs
//
// One reaper leads (a CONTROL_PLANE_REAPER claim). Each pass:
//
//   - expired leases of RUNNING attempts: the attempt EXPIRED, the job
//     requeued with a new enqueue and message, or dead-lettered on its
//     last attempt or when its Run activity is gone; the old message
//     acknowledged after the commit;
//   - QUEUED jobs whose Run activity is gone: dead-lettered;
//   - QUEUED, available jobs whose message was never written (the enqueuer
//     died after the row) or is gone (Redis flushed or restarted): written
//     again for the same enqueue, which is also how a requeue deferred by
//     its backoff, or a message skipped because its job was not yet
//     available, gets its message when due;
//   - settled jobs whose outcome did not reach their activity: notified;
//   - QUEUED jobs' activities: heartbeated while they wait for a worker.
//
// A claim answered but never received leaves an attempt nobody
// heartbeats; its lease lapses and the reaper requeues it.
package controlplane
