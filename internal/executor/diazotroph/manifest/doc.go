// Package manifest is MANIFEST_DIAZOTROPH, the built-in, deterministic
// manifest writer of the task-management azolla (docs/protocol/tasks.md). It writes a
// Markdown report from the snapshot alone: what is DONE since the last
// manifest, IN_PROGRESS, BLOCKED (with reasons), overdue, failed at the gate,
// and the top prioritized actions.
//
// # Input
//
// The manifest scheduler runs the named, versioned substrate queries and
// freezes their results into the snapshot's full_prompt_text as one JSON
// document, the Input of this package
// ({"format":"azolla.manifest_input/v1","now":...,"queries":[...]}), written
// with EncodeInput. Each QueryResult carries the query's name, version,
// parameters and rows; QueryResult.ContentHash is the hash the scheduler
// puts beside the name and row count in related_yield_refs, so the report
// can be reproduced and checked from the snapshot. "now" comes from the
// input: nothing here reads a clock.
//
// Rows are JSON objects whose field names are those of the store records
// (objective, pause_state, run_record, pull_request), so a store record
// marshals straight into a row; fields the report does not use are
// ignored. The queries read
// (Query* constants), and the row type each decodes into:
//
//   - objectives_by_status: ObjectiveRow, every status.
//   - blocked_objectives: ObjectiveRow with blockers and blocker_ref.
//   - overdue_objectives: ObjectiveRow with deadline set.
//   - human_pause_states: PauseRow, pause states waiting for a human.
//   - recent_run_records: RunRow, gate verdicts.
//   - pull_requests: PullRequestRow, the objectives' pull requests: every
//     OPEN one, and those MERGED or CLOSED within the substrate's lookback.
//   - run_spend: SpendRow, the runs of the lookback that could cost
//     (store.Spend.Add counts them): output bundles, and of a best-of-N
//     workorder its candidates that ran instead of its bundle, which
//     repeats the winner's report; each with its generator, the model,
//     cost and tokens of its run report, and its objective's repository.
//
// A query name the report does not know is ignored with a note. A query it
// reads that is missing is a note too (its sections are incomplete), so a
// manifest recorded before the query existed still builds. A query whose
// parameters say ParamTableAbsent ran against a substrate without its
// table (a store older than it): its sections are empty, with a note. A
// row that does not decode into its type is an error wrapping
// ErrInvalidInput. Versions are recorded (Sources), not judged: every
// query is at version 1.
//
// # Report
//
// Sections are sorted, each with at most MaxSectionItems lines (then a line
// saying how many more): Done since the last manifest (DONE and updated
// after last_manifest_at, every DONE when there was none; newest first), In
// progress and Blocked (most urgent first, then oldest), Overdue (earliest
// deadline first), Failed at the gate (gate FAIL after last_manifest_at,
// newest first), Pull requests waiting for review (every OPEN one, by the
// objective's urgency, then longest untouched), Pull requests merged or
// closed since the last manifest (newest first), Spend since the last
// manifest (a total, then by repository and by model, the costliest
// first; summed by store.Spend, so a run of unknown cost is counted and
// shown as such, never as $0; a track's runs are the repository
// "(tasks)"; capped rows make the figures a lower bound, and the section
// says so; a missing query is "not known", not nothing), and Top actions: at most
// MaxTopActions, one per objective, ordered by the objective's urgency,
// then by kind (overdue, gate failure, blocked, pull request to review,
// waiting for a human), then oldest first, then id. An open pull request
// ranks before a human pause of the same objective because it names what
// to review; an objective not among the rows (DONE before the lookback)
// counts as NORMAL. TopActions
// returns them as lines, ready for the manifest gate's pause state.
//
// Text from records is made safe (textsafe.Line) and Markdown punctuation in
// it is escaped, so a title (or a model name an agent reported) can neither
// drive a terminal nor forge a section.
package manifest
