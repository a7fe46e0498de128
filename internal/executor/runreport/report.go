package runreport

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/strictjson"
	"github.com/azolla/azolla/schemas"
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
// tokens, turns, summary, transcript and question.
var ErrEmpty = errors.New("run report says nothing: none of model, cost_usd, tokens, turns, summary, transcript, question")

// Parse reads a report an executor wrote. The error of a report that fails
// the schema is a *schemas.ValidationError naming each failing field by its
// JSON pointer (e.g. "invalid run_report: /cost_usd: must be >= 0 but
// found -1").
func Parse(data []byte) (domain.RunReport, error) {
	if err := schemas.ValidateJSON(schemas.RunReport, data); err != nil {
		if isEmptyObject(data) {
			return domain.RunReport{}, ErrEmpty
		}
		return domain.RunReport{}, fmt.Errorf("parse run report: %w", err)
	}
	var r domain.RunReport
	if err := strictjson.Decode(bytes.NewReader(data), &r); err != nil {
		// The schema accepted it, so this is a figure Go cannot hold.
		return domain.RunReport{}, fmt.Errorf("parse run report: %w", err)
	}
	return r, nil
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
func finish(r domain.RunReport, src domain.ReportSource) (domain.RunReport, error) {
	r.Source = src
	r.Summary = truncateRunes(r.Summary, MaxSummary)
	if err := Validate(r); err != nil {
		return domain.RunReport{}, fmt.Errorf("%s output: %w", src, err)
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

// Validate checks r against the schema; every parser ends with it.
func Validate(r domain.RunReport) error {
	if empty(r) {
		return ErrEmpty
	}
	return schemas.Validate(schemas.RunReport, r)
}

func empty(r domain.RunReport) bool {
	return r.Model == "" && r.CostUSD == nil && r.Tokens == nil && r.Turns == 0 &&
		r.Summary == "" && r.Transcript == nil && r.Question == ""
}
