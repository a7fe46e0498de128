package runreport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/azolla/azolla/internal/domain"
)

// claudeResult is the part of Claude Code's result message that a report
// uses. `claude -p … --output-format json` prints this one object; with
// stream-json it is the last line. Shape: the headless and Agent SDK
// cost-tracking pages (testdata/SOURCES.md).
type claudeResult struct {
	Type         string   `json:"type"`
	Subtype      string   `json:"subtype"`
	IsError      bool     `json:"is_error"`
	NumTurns     int64    `json:"num_turns"`
	Result       string   `json:"result"`
	SessionID    string   `json:"session_id"`
	TotalCostUSD *float64 `json:"total_cost_usd"`
	Usage        *struct {
		InputTokens              int64 `json:"input_tokens"`
		OutputTokens             int64 `json:"output_tokens"`
		CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	} `json:"usage"`
	// ModelUsage maps each model the run used to its share; only the cost
	// is read, to name the model that did most of the work.
	ModelUsage map[string]struct {
		CostUSD float64 `json:"costUSD"`
	} `json:"modelUsage"`
}

// ParseClaudeCode derives a report from the stdout of
// `claude -p … --output-format json`: total_cost_usd, usage (input,
// output, cache creation and cache read tokens), num_turns, session_id,
// result as the summary, and the costliest model of modelUsage. It also
// takes stream-json output, whose last result line is the same object, and
// the older array-of-messages form.
func ParseClaudeCode(out []byte) (domain.RunReport, error) {
	res, err := findClaudeResult(out)
	if err != nil {
		return domain.RunReport{}, fmt.Errorf("claude-code output: %w", err)
	}
	r := domain.RunReport{
		CostUSD:   res.TotalCostUSD,
		Turns:     res.NumTurns,
		SessionID: res.SessionID,
		Summary:   res.Result,
		Model:     costliestModel(res),
	}
	if r.Summary == "" && res.Subtype != "" && res.Subtype != "success" {
		r.Summary = "claude-code ended with " + res.Subtype
	}
	if u := res.Usage; u != nil {
		r.Tokens = &domain.Tokens{
			Input:      u.InputTokens,
			Output:     u.OutputTokens,
			CacheRead:  u.CacheReadInputTokens,
			CacheWrite: u.CacheCreationInputTokens,
		}
	}
	return finish(r, domain.ReportFromClaudeCode)
}

// errNoClaudeResult: the output holds no result message.
var errNoClaudeResult = errors.New(`no result message (a JSON object with "type": "result")`)

func findClaudeResult(out []byte) (claudeResult, error) {
	out = bytes.TrimSpace(out)
	if len(out) == 0 {
		return claudeResult{}, errors.New("empty output")
	}
	var one claudeResult
	if err := json.Unmarshal(out, &one); err == nil {
		if one.Type != "result" {
			return claudeResult{}, errNoClaudeResult
		}
		return one, nil
	} else if out[0] == '{' && !bytes.Contains(out, []byte("\n")) {
		return claudeResult{}, fmt.Errorf("decode result message: %w", err)
	}
	var many []claudeResult
	if err := json.Unmarshal(out, &many); err == nil {
		for i := len(many) - 1; i >= 0; i-- {
			if many[i].Type == "result" {
				return many[i], nil
			}
		}
		return claudeResult{}, errNoClaudeResult
	}
	lines := bytes.Split(out, []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		var line claudeResult
		if json.Unmarshal(bytes.TrimSpace(lines[i]), &line) == nil && line.Type == "result" {
			return line, nil
		}
	}
	return claudeResult{}, errNoClaudeResult
}

// costliestModel names the model with the largest cost in modelUsage, the
// smallest name among equals, so that a run whose helper calls went to a
// small model is reported under the model that did the work.
func costliestModel(res claudeResult) string {
	best, bestCost := "", -1.0
	for name, u := range res.ModelUsage {
		if u.CostUSD > bestCost || (u.CostUSD == bestCost && name < best) {
			best, bestCost = name, u.CostUSD
		}
	}
	return best
}
