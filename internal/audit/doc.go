// Package audit checks, from the database alone, that the state the lifecycle
// left behind honours the guarantees of seeds 000 (claims) and 003 (patch
// execution flow). It reads through store.Querier only, plus, when the store
// offers it, a read-only row count per output_bundles and run_records
// work_order_id, the one thing the store's getters cannot show (a duplicate
// row behind a unique key that was dropped).
//
// # Rules
//
// Each rule has a stable id, printed by `azolla verify`:
//
//	workorder-per-event             an event has at most one workorder; a workorder's event
//	                                exists and was processed SCHEDULED
//	bundle-per-executed-workorder   an EXECUTED workorder has exactly one output_bundle, a
//	                                CREATED one none, and no bundle lacks its workorder
//	run-record-per-gated-workorder  a gated workorder (it has a run_record, or a RUN_COMPLETE
//	                                or GATE_FAILED pause_state names it) has exactly one
//	                                run_record, of its own objective, on an EXECUTED
//	                                workorder; a CREATED one may only have FAIL (its run
//	                                failed for good)
//	event-processed-once            a processed event has a terminal reason and processed_at,
//	                                an unprocessed one neither; SCHEDULED has exactly one
//	                                workorder, any other reason none
//	claim-schema                    every claim row is a valid claim_record
//	no-live-claim-on-finished       no live EVENT claim on a processed event, nor WORKORDER
//	                                claim on a workorder that has its run_record
//	objective-status                an objective's status is one of the schema's; a DONE one
//	                                has a PASS run_record for one of its workorders
//	terminal-pause-state            every verdict is handed back explicitly (seed 003 steps
//	                                4, 13, 14): a run_record PASS has a RUN_COMPLETE
//	                                pause_state for its workorder, FAIL a GATE_FAILED one, and
//	                                each TICKET_READY event processed BLOCKED a BLOCKED
//	                                pause_state for its objective
//
// # A quiet system
//
// The lifecycle writes in the seeds' order: terminal state first, then the
// claim release; bundle, then EXECUTED; run_record, then status, then
// pause_state. Between two such writes the state is legitimately half-way, so
// an audit taken while workers run can report what a moment later would be
// fine, most often a claim still live on a finished resource. Run verify on a
// quiet system (workers stopped or idle), or pass WithGrace so that a claim
// counts only once its last heartbeat is older than the grace period.
package audit
