package triage_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph/triage"
	"github.com/azolla/azolla/internal/executor/patchgen"
	"github.com/azolla/azolla/internal/executor/sandbox"
	"github.com/azolla/azolla/internal/executor/sandbox/sandboxtest"
)

// round is an input of four captures and one open objective.
func round(t *testing.T, failed int) (triage.Input, string) {
	t.Helper()
	in := triage.NewInput(captures())
	in.Captures = append(in.Captures, triage.Capture{CaptureBufferID: "cap-4", Source: "cli", Content: "login page",
		CreatedAt: in.Captures[2].CreatedAt.Add(3 * 60e9)})
	in.OpenObjectives = []triage.OpenObjective{{ObjectiveID: "t-login", Title: "Add a login page"}}
	in.FailedRounds = failed
	doc, err := triage.EncodeInput(in)
	require.NoError(t, err)
	return in, doc
}

// mergeSplitSkip merges cap-2 into cap-1's proposal, splits cap-3 in two
// and skips cap-4 as a duplicate.
const mergeSplitSkip = `{"proposals":[
 {"capture_buffer_id":"cap-1","merged_capture_buffer_ids":["cap-2"],"title":"Make the fetcher retry","acceptance_criteria":["retries 3 times"],"urgency":"HIGH"},
 {"capture_buffer_id":"cap-3","title":"First half","acceptance_criteria":[],"urgency":"NORMAL"},
 {"capture_buffer_id":"cap-3","title":"Second half","acceptance_criteria":["  "],"urgency":"LOW"}],
 "skipped":[{"capture_buffer_id":"cap-4","reason":"duplicate of objective t-login"}]}`

func TestReadAnswer_AcceptsMergesSplitsAndSkipsThatAccountForEveryCapture(t *testing.T) {
	t.Parallel()
	in, _ := round(t, 0)
	for name, text := range map[string]string{"bare": mergeSplitSkip, "fenced": "```json\n" + mergeSplitSkip + "\n```\n"} {
		set, err := triage.ReadAnswer(text, in)
		require.NoError(t, err, name)
		require.Len(t, set.Proposals, 3)
		require.Equal(t, []string{"cap-2"}, set.Proposals[0].MergedCaptureBufferIDs)
		require.Equal(t, []string{}, set.Proposals[2].AcceptanceCriteria, "blank criteria are dropped")
		require.Equal(t, []triage.Skipped{{CaptureBufferID: "cap-4", Reason: "duplicate of objective t-login"}}, set.Skipped)
	}
}

func TestReadAnswer_RefusesWhatDoesNotAccountForTheRound(t *testing.T) {
	t.Parallel()
	in, _ := round(t, 0)
	p := func(id, extra string) string {
		return `{"capture_buffer_id":"` + id + `",` + extra + `"title":"t","acceptance_criteria":[],"urgency":"NORMAL"}`
	}
	all := p("cap-1", "") + "," + p("cap-2", "") + "," + p("cap-3", "")
	cases := map[string]struct{ text, want string }{
		"empty":               {"  \n", "the answer is empty"},
		"not JSON":            {"Here are your proposals!", "not a proposal set"},
		"unknown field":       {`{"proposals":[],"skipped":[],"notes":"x"}`, "not a proposal set"},
		"trailing text":       {`{"proposals":[],"skipped":[]} thanks`, "not a proposal set"},
		"missing a capture":   {`{"proposals":[` + all + `],"skipped":[]}`, "capture(s) cap-4 not accounted for"},
		"unknown capture":     {`{"proposals":[` + all + `,` + p("cap-9", "") + `],"skipped":[]}`, `names capture "cap-9", not one of this round's`},
		"unknown merge":       {`{"proposals":[` + p("cap-1", `"merged_capture_buffer_ids":["cap-2","cap-3","cap-4","cap-9"],`) + `],"skipped":[]}`, `merges capture "cap-9"`},
		"merged and skipped":  {`{"proposals":[` + p("cap-1", `"merged_capture_buffer_ids":["cap-2","cap-3","cap-4"],`) + `],"skipped":[{"capture_buffer_id":"cap-4","reason":"dup"}]}`, "skipped 0 names capture cap-4, which is merged into proposal 0"},
		"merged and proposed": {`{"proposals":[` + all + `,` + p("cap-4", `"merged_capture_buffer_ids":["cap-1"],`) + `],"skipped":[]}`, "merges capture cap-1, which is proposed"},
		"bad urgency":         {strings.ReplaceAll(mergeSplitSkip, `"HIGH"`, `"URGENT"`), "urgency"},
	}
	for name, tc := range cases {
		_, err := triage.ReadAnswer(tc.text, in)
		require.ErrorIs(t, err, triage.ErrInvalidAnswer, name)
		require.Contains(t, err.Error(), tc.want, name)
	}
}

func TestReadAnswer_MakesTextSafeAndBounded(t *testing.T) {
	t.Parallel()
	in, _ := round(t, 0)
	long := strings.Repeat("y", 300)
	text := `{"proposals":[{"capture_buffer_id":"cap-1","merged_capture_buffer_ids":["cap-2","cap-3","cap-4"],"title":"red \u001b[31m ` + long + `","acceptance_criteria":["a\nb"],"urgency":"NORMAL"}],"skipped":[]}`
	set, err := triage.ReadAnswer(text, in)
	require.NoError(t, err)
	require.Len(t, []rune(set.Proposals[0].Title), triage.MaxTitleRunes)
	require.True(t, strings.HasPrefix(set.Proposals[0].Title, `red \x1b[31m`), set.Proposals[0].Title)
	require.Equal(t, []string{`a\x0ab`}, set.Proposals[0].AcceptanceCriteria)
}

// model stands in for a route.
type model struct {
	answer triage.Answer
	err    error
	asked  int
}

func (m *model) Route() string { return "openai" }

func (m *model) Answer(context.Context, triage.Input, string) (triage.Answer, error) {
	m.asked++
	return m.answer, m.err
}

func TestExecute_ModelAnswerIsTheBundleAndAnInvalidOneIsKeptForTheGate(t *testing.T) {
	t.Parallel()
	_, doc := round(t, 0)
	m := &model{answer: triage.Answer{Text: mergeSplitSkip, Notes: []string{"model m"}}}
	res, err := triage.New(triage.Options{Model: m}).Execute(t.Context(), request(t, doc))
	require.NoError(t, err)
	require.Equal(t, domain.RunnerOK, res.RunnerStatus)
	require.Equal(t, "Triage (openai): 3 proposed objective(s) from 4 capture(s)", res.Title)
	require.Contains(t, res.Notes, "capture cap-4 skipped: duplicate of objective t-login")
	require.Contains(t, res.Notes, "1 capture(s) merged into another's proposal")
	var set triage.Set
	require.NoError(t, json.Unmarshal([]byte(res.Content), &set))
	require.Len(t, set.Proposals, 3)

	m.answer.Text = `{"proposals":[],"skipped":[]}`
	res, err = triage.New(triage.Options{Model: m}).Execute(t.Context(), request(t, doc))
	require.NoError(t, err)
	require.Equal(t, domain.RunnerOK, res.RunnerStatus)
	require.Equal(t, m.answer.Text, res.Content, "the answer as it came, for the gate to fail")
	require.Contains(t, res.Notes, "capture(s) cap-2, cap-3, cap-1, cap-4 not accounted for")

	m.answer, m.err = triage.Answer{Notes: []string{"model m"}}, errors.New("POST: 500 Internal Server Error")
	res, err = triage.New(triage.Options{Model: m}).Execute(t.Context(), request(t, doc))
	require.NoError(t, err, "a model's failure is the round's, not the runner's")
	require.Empty(t, res.Content)
	require.Contains(t, res.Notes, "no answer: POST: 500 Internal Server Error")
}

func TestExecute_FallsBackToTheBuiltinRulesAfterMaxFailures(t *testing.T) {
	t.Parallel()
	m := &model{answer: triage.Answer{Text: mergeSplitSkip}}
	d := triage.New(triage.Options{Model: m, MaxFailures: 2})
	_, doc := round(t, 1)
	res, err := d.Execute(t.Context(), request(t, doc))
	require.NoError(t, err)
	require.Equal(t, 1, m.asked, "one failed round: the model is asked")
	require.NotContains(t, res.Notes, "fallback")

	_, doc = round(t, 2)
	res, err = d.Execute(t.Context(), request(t, doc))
	require.NoError(t, err)
	require.Equal(t, 1, m.asked, "two failed rounds: not asked")
	require.Equal(t, "Triage: 3 proposed objective(s) from 4 capture(s)", res.Title)
	require.Contains(t, res.Notes, "fallback: the 2 triage round(s) before this one failed their gate in a row (tasks.triage.max_failures 2), so this round used the built-in rules instead of the openai route")
	var set triage.Set
	require.NoError(t, json.Unmarshal([]byte(res.Content), &set))
	require.Equal(t, "cap-1", set.Proposals[0].CaptureBufferID)
	require.Empty(t, set.Proposals[0].MergedCaptureBufferIDs)
}

func TestExecute_TheBuiltinRouteIgnoresTheNewInputFields(t *testing.T) {
	t.Parallel()
	old, err := triage.EncodeInput(triage.NewInput(captures()))
	require.NoError(t, err)
	require.NotContains(t, old, "open_objectives", "left out when empty: the document reads as before")
	require.NotContains(t, old, "failed_rounds")
	want, err := triage.Diazotroph{}.Execute(t.Context(), request(t, old))
	require.NoError(t, err)
	_, doc := round(t, 7)
	in, err := triage.DecodeInput(doc)
	require.NoError(t, err)
	require.Equal(t, 7, in.FailedRounds)
	require.Equal(t, "t-login", in.OpenObjectives[0].ObjectiveID)
	in.Captures = in.Captures[:3]
	doc, err = triage.EncodeInput(in)
	require.NoError(t, err)
	got, err := triage.Diazotroph{}.Execute(t.Context(), request(t, doc))
	require.NoError(t, err)
	require.Equal(t, want, got)
}

func TestCommandRoute_ReadsTheInputAndPrintsTheAnswerWithoutAzollaSecrets(t *testing.T) {
	t.Setenv("AZOLLA_STORE_DSN", "postgres://azolla:hunter2-secret@db/azolla")
	_, doc := round(t, 0)
	// The stand-in checks that stdin is the input file, sees the
	// instructions and no DSN, writes a report and prints the answer.
	run := `set -e
cmp -s "$AZOLLA_INPUT_FILE" - || { echo "stdin is not the input file" >&2; exit 3; }
grep -q "Account for every capture" "$AZOLLA_INSTRUCTIONS_FILE"
test -z "${AZOLLA_STORE_DSN:-}" || { echo "a secret leaked" >&2; exit 4; }
printf '{"model":"stand-in","turns":1}' > "$AZOLLA_REPORT_FILE"
cat <<'JSON'
` + mergeSplitSkip + `
JSON`
	exec := sandboxtest.Unconfined(t, sandbox.Policy{})
	res, err := triage.New(triage.Options{Model: triage.NewCommand(run, exec)}).Execute(t.Context(), request(t, doc))
	require.NoError(t, err)
	require.Equal(t, "Triage (command): 3 proposed objective(s) from 4 capture(s)", res.Title, res.Notes)
	require.Contains(t, res.Notes, "command exited 0")
	require.Equal(t, &domain.RunReport{Model: "stand-in", Turns: 1, Source: domain.ReportFromExecutor}, res.Metadata.RunReport)

	res, err = triage.New(triage.Options{Model: triage.NewCommand("echo '{}'; echo oops >&2; exit 2", exec)}).Execute(t.Context(), request(t, doc))
	require.NoError(t, err)
	require.Empty(t, res.Content, "a failed command's output is not used")
	require.Contains(t, res.Notes, "command exited with status 2")
	require.Contains(t, res.Notes, "oops")
}

func TestOpenAIRoute_AsksTheEndpointAndReportsItsUsage(t *testing.T) {
	t.Parallel()
	_, doc := round(t, 0)
	bodies := make(chan map[string]any, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		bodies <- body
		_ = json.NewEncoder(w).Encode(map[string]any{"model": "triager-1",
			"choices": []any{map[string]any{"finish_reason": "stop", "message": map[string]any{"content": "```json\n" + mergeSplitSkip + "\n```"}}},
			"usage":   map[string]any{"prompt_tokens": 120, "completion_tokens": 30, "prompt_tokens_details": map[string]any{"cached_tokens": 20}}})
	}))
	t.Cleanup(srv.Close)
	client, err := patchgen.NewOpenAI(patchgen.OpenAIOptions{BaseURL: srv.URL, Model: "triager"})
	require.NoError(t, err)
	res, err := triage.New(triage.Options{Model: triage.NewOpenAI(client)}).Execute(t.Context(), request(t, doc))
	require.NoError(t, err)
	require.Equal(t, "Triage (openai): 3 proposed objective(s) from 4 capture(s)", res.Title, res.Notes)
	require.Equal(t, &domain.RunReport{Model: "triager-1", Source: domain.ReportFromExecutor,
		Tokens: &domain.Tokens{Input: 100, Output: 30, CacheRead: 20}}, res.Metadata.RunReport)
	body := <-bodies
	msgs := body["messages"].([]any)
	require.Equal(t, triage.Instructions, msgs[0].(map[string]any)["content"])
	require.Equal(t, doc, msgs[1].(map[string]any)["content"])
}
