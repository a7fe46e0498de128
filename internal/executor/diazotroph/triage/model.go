package triage

import (
	"context"

	"github.com/azolla/azolla/internal/domain"
)

// Routes of a triage round: the built-in rules, or a model asked through a
// command or an OpenAI-compatible endpoint (tasks.triage.generator).
const (
	RouteBuiltin = "builtin"
	RouteCommand = "command"
	RouteOpenAI  = "openai"
)

// DefaultMaxFailures is how many rounds in a row may fail their gate on a
// model route before a round falls back to the built-in rules.
const DefaultMaxFailures = 3

// Model answers a triage round with a proposal set: the command and openai
// routes.
type Model interface {
	// Route is RouteCommand or RouteOpenAI.
	Route() string
	// Answer asks for the proposals of in, whose document (the snapshot's
	// full_prompt_text) is doc. An error is a run that gave no answer
	// (the endpoint refused, the command failed); ctx carries the budget.
	Answer(ctx context.Context, in Input, doc string) (Answer, error)
}

// Answer is what a model said.
type Answer struct {
	// Text should be the proposal set's JSON; ReadAnswer judges it.
	Text string
	// Notes say how the run went, one line each.
	Notes []string
	// Report is the run's report (model, tokens), nil when there is none.
	Report *domain.RunReport
}

// Instructions tell a model what to answer. The openai route sends them as
// the system message; the command route writes them to the file named by
// $AZOLLA_INSTRUCTIONS_FILE.
const Instructions = `You triage captures: short notes people wrote down for a software team. Turn them into proposed objectives.

The user message (for a command: stdin and the file named by $AZOLLA_INPUT_FILE) is a JSON document with
"captures" (capture_buffer_id, source, content, created_at) and "open_objectives" (objective_id, title): the work already planned.

Answer with exactly one JSON object and nothing else:
{"proposals":[{"capture_buffer_id":"...","merged_capture_buffer_ids":["..."],"title":"...","acceptance_criteria":["..."],"urgency":"NORMAL","due_at":"2026-12-01T23:59:59Z"}],
 "skipped":[{"capture_buffer_id":"...","reason":"..."}]}

Rules:
- Account for every capture exactly once: it is the capture_buffer_id of one or more proposals, or listed in one proposal's merged_capture_buffer_ids, or skipped with a reason. Use no other capture ids.
- Merge captures that ask for the same thing into one proposal: the oldest capture as capture_buffer_id, the others in merged_capture_buffer_ids.
- Split a capture that asks for several independent things into several proposals with the same capture_buffer_id.
- Skip a capture that duplicates an open objective, with the reason "duplicate of objective <objective_id>", and one that asks for nothing, saying why.
- title: one line, at most 200 characters. acceptance_criteria: testable statements, one line each, at most 50 ([] when none).
- urgency: LOW, NORMAL, HIGH or CRITICAL. due_at (UTC, RFC 3339) only when the capture names a date. merged_capture_buffer_ids and due_at may be left out.
- No other fields.`
