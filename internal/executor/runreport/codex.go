package runreport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/azolla/azolla/internal/domain"
)

// codexEvent is one line of `codex exec --json`, the fields a report uses.
// Shape: the exec JSONL events (thread.started, turn.completed with usage
// {input_tokens, cached_input_tokens, output_tokens}, item.completed) as
// shown in openai/codex issues and the Codex SDK docs (testdata/SOURCES.md).
type codexEvent struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Usage    *struct {
		InputTokens           int64 `json:"input_tokens"`
		CachedInputTokens     int64 `json:"cached_input_tokens"`
		CacheWriteInputTokens int64 `json:"cache_write_input_tokens"`
		OutputTokens          int64 `json:"output_tokens"`
	} `json:"usage"`
	Item *struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"item"`
}

// ParseCodex derives a report from the stdout of `codex exec --json`, the
// JSONL event stream of current Codex versions (the turn.* / item.* events;
// the older `msg`-wrapped protocol is not read). It takes the thread id of
// thread.started as the session, the text of the last agent_message item as
// the summary, counts turn.completed and turn.failed as turns, and reads the
// tokens of the last turn.completed: its usage is the thread's running total
// (openai/codex#17539), so adding the events up would count a turn twice.
// OpenAI counts cached input inside input_tokens; the report's input
// excludes it. Codex reports neither a cost nor the model in this stream.
//
// A line that is not a JSON event is skipped (a run cut off by its budget
// ends mid-line); output without any event is an error.
func ParseCodex(out []byte) (domain.RunReport, error) {
	var r domain.RunReport
	events := 0
	for line := range bytes.SplitSeq(out, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var ev codexEvent
		if err := json.Unmarshal(line, &ev); err != nil || ev.Type == "" {
			continue
		}
		events++
		switch ev.Type {
		case "thread.started":
			r.SessionID = ev.ThreadID
		case "turn.completed":
			r.Turns++
			if u := ev.Usage; u != nil {
				if u.CachedInputTokens > u.InputTokens {
					return domain.RunReport{}, fmt.Errorf("codex output: turn.completed: cached_input_tokens %d exceeds input_tokens %d",
						u.CachedInputTokens, u.InputTokens)
				}
				r.Tokens = &domain.Tokens{
					Input:      u.InputTokens - u.CachedInputTokens,
					Output:     u.OutputTokens,
					CacheRead:  u.CachedInputTokens,
					CacheWrite: u.CacheWriteInputTokens,
				}
			}
		case "turn.failed":
			r.Turns++
		case "item.completed":
			if ev.Item != nil && ev.Item.Type == "agent_message" && ev.Item.Text != "" {
				r.Summary = ev.Item.Text
			}
		}
	}
	if events == 0 {
		return domain.RunReport{}, errors.New("codex output: no JSON events")
	}
	return finish(r, domain.ReportFromCodex)
}
