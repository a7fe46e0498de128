// Package audit checks, from the database alone, that the state the lifecycle
// left behind honours the guarantees of the protocol (docs/protocol/README.md): claims, task
// management: captures and the track), 003 (patch execution flow) and 004
// (remote workers' jobs; one rule also asks the control plane's
// transport). It reads through Reader only, plus, when
// the store offers them, its jobs (store.JobStore) and a read-only row count
// per output_bundles, run_records and candidates work_order_id, the one thing the
// store's getters cannot show (a duplicate row behind a unique key that was
// dropped, a row whose workorder is gone).
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
//	                                claim on a workorder that has its run_record, nor TRACK
//	                                claim held for an event whose run was gated (or that was
//	                                processed without a workorder)
//	objective-status                an objective's status is one of the schema's; a DONE one
//	                                has a PASS run_record for one of its workorders
//	terminal-pause-state            every verdict is handed back explicitly (docs/protocol/lifecycle.md#pause-states,
//	                                4, 13, 14): a run_record PASS has a RUN_COMPLETE
//	                                pause_state for its workorder, FAIL a GATE_FAILED one (or
//	                                BUDGET_SPENT, once the objective's budget is spent; BLOCKED
//	                                when the FAIL is the environment's); either may be
//	                                CLOSED_ON_FORGE when the objective's issue closed while
//	                                the round ran, and
//	                                each TICKET_READY event processed BLOCKED a BLOCKED
//	                                pause_state for its objective; a track workorder's PASS
//	                                has its PROPOSALS_REVIEW (triage) or MANIFEST_READY pause
//	capture-ready-once              a capture has one CAPTURE_READY event plus at most one
//	                                per failed triage round that took it; a PENDING one
//	                                older than the grace period has one, and a PENDING one
//	                                no workorder holds has one not yet processed
//	capture-processed-by-its-triage a capture taken by a triage workorder is PROCESSED exactly
//	                                when that workorder passed its gate, and every objective
//	                                it became exists
//	track-one-active                a track's triage and manifest workorders were never
//	                                active together (created to run_record, or to now)
//	pull-request-schema             every pull_request row is valid (a MERGED one has
//	                                merged_at, a CLOSED one closed_at) and its head is
//	                                its objective's branch
//	pull-request-of-passed-workorder
//	                                a pull_request's objective exists, and its workorder is
//	                                one of that objective's with a PASS run_record
//	pull-request-feedback-from-trusted
//	                                every pull_request_feedback row is valid; one a round took
//	                                is of a trusted author, says why, and names a TICKET_READY
//	                                event of its own objective
//	candidate-chosen-once           a workorder's candidates have at most one chosen, and
//	                                exactly one once the workorder has an output_bundle
//	                                with content (none produced a patch: none is chosen)
//	bundle-is-chosen-candidate      a PATCH_DIAZOTROPH workorder's OK bundle carries its
//	                                chosen candidate's patch: equal as text but for
//	                                carriage returns, whitespace at line ends and blank
//	                                lines at the end (both are the diff of a commit), or,
//	                                when the candidate kept only patch_sha256, by the
//	                                SHA-256 of the bundle's content
//	candidate-of-existing-workorder no candidate row names a workorder that does not exist
//	job-one-open-attempt            a job has at most one RUNNING attempt; a RUNNING
//	                                job exactly one, a job in another status none
//	job-succeeded-once              a SUCCEEDED job has exactly one SUCCEEDED attempt, a job
//	                                in another status none
//	job-no-live-lease-when-settled  no live (unreleased, unexpired) lease on a SUCCEEDED,
//	                                FAILED or DEAD_LETTERED job; at most one live lease per
//	                                job, held by a RUNNING attempt
//	job-message-pending-while-running
//	                                the message a RUNNING attempt was claimed from is still
//	                                pending in the transport: nothing was acknowledged for a
//	                                job the database has not settled or requeued (needs
//	                                WithMessages; skipped without it)
//	job-schema                      every job, job_attempt and job_lease row is valid
//
// # A quiet system
//
// The lifecycle writes in the protocol's order: terminal state first, then the
// claim release; bundle, then EXECUTED; run_record, then status, then
// pause_state. Between two such writes the state is legitimately half-way, so
// an audit taken while workers run can report what a moment later would be
// fine, most often a claim still live on a finished resource. Run verify on a
// quiet system (workers stopped or idle), or pass WithGrace so that a claim
// counts only once its last heartbeat is older than the grace period.
//
// The job rules need no grace: the control plane closes an attempt, moves
// its job on and releases its lease in one transaction, and acknowledges
// the message only after that commit. A job the audit read as RUNNING whose
// message is no longer pending is read again before it is reported, so a
// settle that landed in between is not mistaken for an early
// acknowledgement.
package audit
