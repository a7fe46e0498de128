package runreport

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/azolla/azolla/internal/strictjson"
	"github.com/azolla/azolla/schemas"
)

// Source says who wrote a report.
type Source string

// The writers of a report: the executor itself, or one preset's parser.
const (
	SourceExecutor   Source = "executor"
	SourceClaudeCode Source = "claude-code"
	SourceCodex      Source = "codex"
	SourceAider      Source = "aider"
)

// Bounds of the schema that the parsers apply before validating, so that a
// long agent answer is shortened rather than refused.
const (
	// MaxSummary is the most characters (runes) a summary may hold.
	MaxSummary = 2000
	// MaxTranscriptText is the most characters an inline transcript may hold.
	MaxTranscriptText = 262144
)

// ErrEmpty is returned for a report that carries none of model, cost_usd,
// tokens, turns, summary and transcript.
var ErrEmpty = errors.New("run report says nothing: none of model, cost_usd, tokens, turns, summary, transcript")

// Report mirrors run_report.schema.json.
type Report struct {
	// Model is the model that did the work, "" when unknown.
	Model string `json:"model,omitempty"`
	// CostUSD is the run's cost in dollars; nil is unknown, which is not
	// the same as free.
	CostUSD *float64 `json:"cost_usd,omitempty"`
	// Tokens is nil when the run reported no token counts.
	Tokens *Tokens `json:"tokens,omitempty"`
	// Turns is the number of agent turns, 0 when unknown.
	Turns int64 `json:"turns,omitempty"`
	// Summary is the agent's short account of the run.
	Summary string `json:"summary,omitempty"`
	// Transcript is inline text or a file under the artifact directory.
	Transcript *Transcript `json:"transcript,omitempty"`
	// SessionID is the agent's own session or thread id.
	SessionID string `json:"session_id,omitempty"`
	// Source says who wrote the report.
	Source Source `json:"source,omitempty"`
}

// Tokens counts a run's tokens. Input excludes the tokens read from or
// written to a prompt cache, which are counted on their own.
type Tokens struct {
	Input      int64 `json:"input,omitempty"`
	Output     int64 `json:"output,omitempty"`
	CacheRead  int64 `json:"cache_read,omitempty"`
	CacheWrite int64 `json:"cache_write,omitempty"`
}

// Transcript is exactly one of Text and Path.
type Transcript struct {
	// Text is the transcript inline.
	Text string `json:"text,omitempty"`
	// Path is a file relative to $AZOLLA_ARTIFACT_DIR, never outside it.
	Path string `json:"path,omitempty"`
}

// Parse reads a report an executor wrote. The error of a report that fails
// the schema is a *schemas.ValidationError naming each failing field by its
// JSON pointer (e.g. "invalid run_report: /cost_usd: must be >= 0 but
// found -1").
func Parse(data []byte) (Report, error) {
	if err := schemas.ValidateJSON(schemas.RunReport, data); err != nil {
		if isEmptyObject(data) {
			return Report{}, ErrEmpty
		}
		return Report{}, fmt.Errorf("parse run report: %w", err)
	}
	var r Report
	if err := strictjson.Decode(bytes.NewReader(data), &r); err != nil {
		// The schema accepted it, so this is a figure Go cannot hold.
		return Report{}, fmt.Errorf("parse run report: %w", err)
	}
	return r, nil
}

// Validate checks r against the schema; every parser ends with it.
func (r Report) Validate() error {
	if r.empty() {
		return ErrEmpty
	}
	return schemas.Validate(schemas.RunReport, r)
}

func (r Report) empty() bool {
	return r.Model == "" && r.CostUSD == nil && r.Tokens == nil && r.Turns == 0 &&
		r.Summary == "" && r.Transcript == nil
}

// isEmptyObject reports whether data is a JSON object holding nothing but
// source and session_id, so that Parse can give ErrEmpty instead of one
// "required property is missing" per optional field.
func isEmptyObject(data []byte) bool {
	var probe map[string]any
	if err := strictjson.Decode(bytes.NewReader(data), &probe); err != nil || probe == nil {
		return false
	}
	for k := range probe {
		if k != "source" && k != "session_id" {
			return false
		}
	}
	return true
}

// finish completes a report made by a parser: it names the source, bounds
// the summary and validates the result.
func finish(r Report, src Source) (Report, error) {
	r.Source = src
	r.Summary = truncateRunes(r.Summary, MaxSummary)
	if err := r.Validate(); err != nil {
		return Report{}, fmt.Errorf("%s output: %w", src, err)
	}
	return r, nil
}

// truncateRunes cuts s to at most n runes (the schema counts characters),
// the last of them an ellipsis that marks the cut.
func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

func ptr[T any](v T) *T { return &v }
