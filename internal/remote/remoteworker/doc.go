// Package remoteworker is the worker side of the worker ↔ control
// plane contract: `azolla remote-worker` pulls diazotroph jobs over
// outbound HTTP and needs no inbound port, no store and no Temporal.
//
// The protocol, as a worker sees it:
//
//	claim (long poll, streams in priority order)
//	  └─ claimed: run the payload under a lease context
//	       ├─ every heartbeat_interval_seconds: heartbeat
//	       │    ├─ ok: the lease runs on (locally: send time + lease TTL)
//	       │    ├─ refused (409 lease_lost/stale/activity_cancelled, 404, any
//	       │    │   other 4xx, ok=false): cancel the run, write nothing
//	       │    └─ no answer / 5xx: retry until the lease would have
//	       │        expired, then cancel, write nothing
//	       ├─ result: complete   ─┐ retried on transient failures while
//	       └─ error:  fail        ─┘ the lease holds; idempotent by
//	                                 (job_id, attempt_id) on the server
//
// Fencing: the lease is the right to settle. Once it is lost the run's
// context ends (the diazotrophs then kill their process groups) and the
// worker sends neither complete nor fail, even for a result that raced the
// loss; the control plane would refuse it, and the reaper requeues the job.
//
// Shutdown: when Run's context ends the worker stops claiming; a running
// job may finish within the shutdown grace and is completed, past it it is
// cancelled and failed with CodeWorkerShutdown, retryable.
//
// A complete refused with 409 activity_cancelled came after the gate's
// verdict on the workorder: the control plane wrote nothing and
// dead-letters the job; the worker does not retry it.
//
// A worker holds no stream credentials: ack=true in an answer means the
// control plane has acknowledged the stream message on its behalf.
//
// Workspaces: a worker records the PATCH_DIAZOTROPH workspaces it runs
// jobs in (Workspaces) and prunes those of finished jobs (Pruner) by age
// and push marker, without a store (docs/remote-workers.md#workspaces).
package remoteworker
