// Package triage is TRIAGE_DIAZOTROPH, the triage of the task-management
// azolla (docs/protocol/tasks.md): it turns the captures frozen in a context
// snapshot into proposed objectives, by built-in, deterministic rules (one
// proposal per capture) or, on a model route, by a model's answer. The gate
// (not this package) validates the proposals and creates them as NEW
// objectives.
//
// # Input
//
// The scheduler freezes the captures of one triage round into the
// snapshot's full_prompt_text as one JSON document, the Input of this
// package ({"format":"azolla.triage_input/v1","captures":[...]}), built with
// EncodeInput from store.CaptureBuffer records. Carrying it there needs no
// schema change: full_prompt_text is any non-empty string, and the snapshot
// alone reproduces the run. related_yield_refs are not read. Two optional
// fields were added later and are left out when empty, so a snapshot
// recorded before them still decodes: open_objectives (the ids and titles
// of the objectives not yet DONE, for a model to name a duplicate) and
// failed_rounds (how many triage rounds before this one failed their gate
// in a row). The rules read neither.
//
// # Rules, per capture
//
//   - Lines are split on "\n"; a trailing "\r" and surrounding white space
//     are trimmed from each line.
//   - Title: the first non-empty line, a leading "- " removed, made one
//     safe line by textsafe.Line (controls are shown as escapes, never
//     kept) and cut to MaxTitleRunes runes (ending in "…" when cut). The
//     words below are left in the title as written.
//   - Acceptance criteria: every later line starting with "- " (after
//     indentation), its text after the dash, made safe and cut to
//     MaxCriterionRunes; empty bullets are skipped; at most MaxCriteria,
//     the rest dropped with a note.
//   - Urgency: CRITICAL (the highest the objective schema allows) when the
//     word "urgent" or "asap" appears anywhere in the capture, in any case,
//     as a whole word (letters and digits around it break the word:
//     "urgently" does not count), unless the word before it is "not" or it
//     is written "non-urgent"; otherwise NORMAL.
//   - Due date: "by YYYY-MM-DD" ("by" in any case, then spaces or tabs, then
//     a calendar date, not followed by a digit) sets due_at to the end of
//     that day in UTC (23:59:59Z). With several, the earliest wins. A date
//     that is not a real day (2026-02-30) is ignored and the run's notes
//     say so.
//   - A capture with no non-empty line (only white space) yields no
//     proposal: it is listed under "skipped" with its reason, so the gate
//     can mark it processed and one bad capture never wedges a round.
//
// Proposals are ordered by capture created_at, then capture id; the output
// is the JSON of a Set, valid against schemas/triage_proposal.schema.json.
//
// # Model routes
//
// With a Model (Options.Model; tasks.triage.generator command or openai)
// the round's document is the model's input and its answer, read by
// ReadAnswer, the bundle: a set in the same schema, in which a proposal may
// name merged_capture_buffer_ids (several captures, one proposal), one
// capture may be the capture_buffer_id of several proposals (a split), and
// a capture may be skipped with any reason ("duplicate of objective X").
// ReadAnswer makes titles, criteria and reasons safe lines as the rules do,
// and refuses anything else that is wrong, above all an answer that does
// not account for every capture of the round exactly once (Set.Account,
// which the gate asks too). A refused answer, or none, is still a bundle
// (RunnerOK, the answer as it came in content, why in the notes), so the
// gate fails the round and nothing is created. When failed_rounds has
// reached Options.MaxFailures, the round runs the rules instead and its
// notes say so.
//
// The command route (Command) runs a shell command through its executor
// (package sandbox): the document on stdin and in $AZOLLA_INPUT_FILE,
// Instructions in $AZOLLA_INSTRUCTIONS_FILE, the answer on stdout, a run
// report in $AZOLLA_REPORT_FILE. The openai route (OpenAI) asks an
// OpenAI-compatible endpoint through patchgen.OpenAI.Chat, Instructions as
// the system message, and turns the usage it reports into the bundle's run
// report.
package triage
