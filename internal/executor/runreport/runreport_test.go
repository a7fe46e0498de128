package runreport_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/runreport"
	"github.com/azolla/azolla/schemas"
)

func ptr[T any](v T) *T { return &v }

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return data
}

// requirePointer asserts that err is a schema violation at pointer.
func requirePointer(t *testing.T, err error, pointer string) {
	t.Helper()
	require.Error(t, err)
	var ve *schemas.ValidationError
	require.ErrorAs(t, err, &ve, "error: %v", err)
	var pointers []string
	for _, v := range ve.Violations {
		pointers = append(pointers, v.Pointer)
	}
	require.Contains(t, pointers, pointer, "error: %v", err)
	require.Contains(t, err.Error(), pointer+": ")
}

func TestPresetParsers_FixturesGiveExactReports(t *testing.T) {
	t.Parallel()
	cases := []struct {
		preset  string
		fixture string
		want    domain.RunReport
	}{
		{"claude-code", "claude-code.json", domain.RunReport{
			Model:     "claude-sonnet-4-5-20250929",
			CostUSD:   ptr(0.2131275),
			Tokens:    &domain.Tokens{Input: 21, Output: 2210, CacheRead: 104577, CacheWrite: 18342},
			Turns:     9,
			Summary:   "Added exponential backoff to the fetcher's retry loop and a test for it; go test ./... passes.",
			SessionID: "6f0a4c1e-2b7d-4e39-9c55-0d1e8a3b7f42",
			Source:    domain.ReportFromClaudeCode,
		}},
		{"codex", "codex.jsonl", domain.RunReport{
			Tokens:    &domain.Tokens{Input: 16466, Output: 1877, CacheRead: 31744},
			Turns:     1,
			Summary:   "Added backoff between fetch retries.",
			SessionID: "0199a7d2-5c3e-7f10-b4a8-6e2d1c9f0a37",
			Source:    domain.ReportFromCodex,
		}},
		{"aider", "aider.txt", domain.RunReport{
			Model:   "anthropic/claude-sonnet-4-5-20250929",
			CostUSD: ptr(0.07),
			// 9.8k sent of which 2.4k cache write, then 11k sent.
			Tokens: &domain.Tokens{Input: 7400 + 11000, Output: 412 + 1200, CacheRead: 7100, CacheWrite: 2400},
			Turns:  2,
			Source: domain.ReportFromAider,
		}},
	}
	for _, tc := range cases {
		t.Run(tc.preset, func(t *testing.T) {
			t.Parallel()
			p, err := runreport.LookupPreset(tc.preset)
			require.NoError(t, err)
			require.Equal(t, runreport.Stdout, p.Output)
			got, err := p.Parse(fixture(t, tc.fixture))
			require.NoError(t, err)
			require.Equal(t, tc.want, got)

			// What a preset derives is a report an executor could have
			// written: it survives the file form unchanged.
			data, err := json.Marshal(got)
			require.NoError(t, err)
			again, err := runreport.Parse(data)
			require.NoError(t, err)
			require.Equal(t, got, again)
		})
	}
}

func TestParseClaudeCode_StreamAndArrayFormsGiveTheSameReport(t *testing.T) {
	t.Parallel()
	object := fixture(t, "claude-code.json")
	want, err := runreport.ParseClaudeCode(object)
	require.NoError(t, err)

	stream := `{"type":"system","subtype":"init","session_id":"s"}` + "\n" +
		`{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]}}` + "\n" +
		strings.TrimSpace(string(object)) + "\n"
	got, err := runreport.ParseClaudeCode([]byte(stream))
	require.NoError(t, err)
	require.Equal(t, want, got)

	array := `[{"type":"system","subtype":"init"},` + strings.TrimSpace(string(object)) + `]`
	got, err = runreport.ParseClaudeCode([]byte(array))
	require.NoError(t, err)
	require.Equal(t, want, got)
}

func TestParseClaudeCode_ErrorRunIsSummarisedBySubtype(t *testing.T) {
	t.Parallel()
	got, err := runreport.ParseClaudeCode([]byte(`{"type":"result","subtype":"error_max_budget_usd","is_error":true,` +
		`"num_turns":4,"total_cost_usd":1.02,"usage":{"input_tokens":8,"output_tokens":900}}`))
	require.NoError(t, err)
	require.Equal(t, "claude-code ended with error_max_budget_usd", got.Summary)
	require.Equal(t, ptr(1.02), got.CostUSD)
	require.Equal(t, int64(4), got.Turns)
}

func TestParseClaudeCode_LongResultIsShortenedNotRefused(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", runreport.MaxSummary+500)
	out, err := json.Marshal(map[string]any{"type": "result", "result": long, "num_turns": 1})
	require.NoError(t, err)
	got, err := runreport.ParseClaudeCode(out)
	require.NoError(t, err)
	require.Equal(t, runreport.MaxSummary, utf8.RuneCountInString(got.Summary))
	require.True(t, strings.HasSuffix(got.Summary, "…"))
}

func TestParseCodex_LastTurnTotalsWinAndBrokenLinesAreSkipped(t *testing.T) {
	t.Parallel()
	out := `{"type":"thread.started","thread_id":"th_1"}
not json at all
{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":40,"output_tokens":10}}
{"type":"turn.completed","usage":{"input_tokens":250,"cached_input_tokens":90,"output_tokens":30,"cache_write_input_tokens":7}}
{"type":"item.completed","item":{"id":"item_9","type":"agent_mess`
	got, err := runreport.ParseCodex([]byte(out))
	require.NoError(t, err)
	require.Equal(t, domain.RunReport{
		Tokens:    &domain.Tokens{Input: 160, Output: 30, CacheRead: 90, CacheWrite: 7},
		Turns:     2,
		SessionID: "th_1",
		Source:    domain.ReportFromCodex,
	}, got)
}

func TestParseAider_SuffixesAndLastSessionCost(t *testing.T) {
	t.Parallel()
	out := "Model: gpt-4o with diff edit format\n" +
		"Tokens: 1.5M sent, 2k received. Cost: $3.10 message, $3.10 session.\n" +
		"Tokens: 950 sent, 12 received.\n" +
		"Tokens: 12k sent, 0.5k received. Cost: $0.0081 message, $3.1181 session.\n"
	got, err := runreport.ParseAider([]byte(out))
	require.NoError(t, err)
	require.Equal(t, domain.RunReport{
		Model:   "gpt-4o",
		CostUSD: ptr(3.1181),
		Tokens:  &domain.Tokens{Input: 1_500_000 + 950 + 12_000, Output: 2000 + 12 + 500},
		Turns:   3,
		Source:  domain.ReportFromAider,
	}, got)
}

func TestPresetParsers_MalformedOutputIsAnErrorNotAPanic(t *testing.T) {
	t.Parallel()
	inputs := []string{
		"",
		"   \n\n",
		"{",
		"[",
		"null",
		`"result"`,
		"\x00\xff\xfe binary",
		`{"type":"result","usage":"lots"}`,
		`{"type":"result","num_turns":"nine"}`,
		`{"type":"assistant"}`,
		`[{"type":"user"}]`,
		`{"type":"turn.completed","usage":{"input_tokens":1e40}}`,
		"Tokens: lots sent, few received.",
		"Tokens: 1.2.3k sent, 4 received.",
	}
	for _, p := range runreport.Presets() {
		for _, in := range inputs {
			t.Run(string(p.Name)+"/"+in, func(t *testing.T) {
				t.Parallel()
				var err error
				require.NotPanics(t, func() { _, err = p.Parse([]byte(in)) })
				require.Error(t, err)
				require.True(t, strings.HasPrefix(err.Error(), string(p.Name)+" output: "), err.Error())
			})
		}
	}
}

// Figures an agent's output must not smuggle into a ledger are refused
// with the field named, whichever preset read them.
func TestPresetParsers_HostileFiguresAreRefused(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		parse   func([]byte) (domain.RunReport, error)
		out     string
		pointer string
		msg     string
	}{
		{"claude negative cost", runreport.ParseClaudeCode,
			`{"type":"result","total_cost_usd":-4,"num_turns":1}`, "/cost_usd", ""},
		{"claude runaway cost", runreport.ParseClaudeCode,
			`{"type":"result","total_cost_usd":7e9,"num_turns":1}`, "/cost_usd", ""},
		{"claude trillions of tokens", runreport.ParseClaudeCode,
			`{"type":"result","usage":{"input_tokens":5000000000000}}`, "/tokens/input", ""},
		{"claude negative tokens", runreport.ParseClaudeCode,
			`{"type":"result","usage":{"output_tokens":-1}}`, "/tokens/output", ""},
		{"claude turns", runreport.ParseClaudeCode,
			`{"type":"result","num_turns":99999999}`, "/turns", ""},
		{"claude escape in session id", runreport.ParseClaudeCode,
			`{"type":"result","num_turns":1,"session_id":"a\u001b[2Jb"}`, "/session_id", ""},
		{"claude escape in model", runreport.ParseClaudeCode,
			`{"type":"result","num_turns":1,"modelUsage":{"x\u202ey":{"costUSD":1}}}`, "/model", ""},
		{"codex trillions of tokens", runreport.ParseCodex,
			`{"type":"turn.completed","usage":{"input_tokens":9000000000000,"output_tokens":1}}`, "/tokens/input", ""},
		{"codex cached above input", runreport.ParseCodex,
			`{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":5}}`, "", "exceeds input_tokens"},
		{"aider runaway cost", runreport.ParseAider,
			"Tokens: 1k sent, 1 received. Cost: $2000000 message, $2000000 session.", "/cost_usd", ""},
		{"aider trillions of tokens", runreport.ParseAider,
			"Tokens: 9000000M sent, 1 received.", "", "exceeds"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := tc.parse([]byte(tc.out))
			require.Error(t, err)
			if tc.pointer != "" {
				requirePointer(t, err, tc.pointer)
			}
			require.Contains(t, err.Error(), tc.msg)
		})
	}
}

func TestParse_ExecutorReport(t *testing.T) {
	t.Parallel()
	got, err := runreport.Parse([]byte(`{"model":"local-llama","cost_usd":0,"turns":3,
		"transcript":{"path":"logs/run.txt"},"source":"executor"}`))
	require.NoError(t, err)
	require.Equal(t, domain.RunReport{
		Model:      "local-llama",
		CostUSD:    ptr(0.0), // free, which is not the same as unknown
		Turns:      3,
		Transcript: &domain.RunTranscript{Path: "logs/run.txt"},
		Source:     domain.ReportFromExecutor,
	}, got)
}

func TestParse_BadReportNamesTheField(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		doc     string
		pointer string
	}{
		{"negative cost", `{"cost_usd":-0.01}`, "/cost_usd"},
		{"cost as text", `{"cost_usd":"0.10"}`, "/cost_usd"},
		{"huge tokens", `{"tokens":{"output":1e300}}`, "/tokens/output"},
		{"unknown token kind", `{"tokens":{"reasoning":5}}`, "/tokens/reasoning"},
		{"path traversal", `{"transcript":{"path":"a/../../etc/passwd"}}`, "/transcript/path"},
		{"absolute path", `{"transcript":{"path":"/etc/passwd"}}`, "/transcript/path"},
		{"hidden file", `{"transcript":{"path":".ssh/id_ed25519"}}`, "/transcript/path"},
		{"text and path", `{"transcript":{"text":"t","path":"t.txt"}}`, "/transcript"},
		{"summary too long", `{"summary":"` + strings.Repeat("x", runreport.MaxSummary+1) + `"}`, "/summary"},
		{"unknown field", `{"turns":1,"exit_code":0}`, "/exit_code"},
		{"unknown source", `{"turns":1,"source":"cursor"}`, "/source"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := runreport.Parse([]byte(tc.doc))
			requirePointer(t, err, tc.pointer)
			require.True(t, strings.HasPrefix(err.Error(), "parse run report: invalid run_report: "), err.Error())
		})
	}
}

func TestParse_ReportThatSaysNothingIsErrEmpty(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{`{}`, `{"source":"executor","session_id":"s1"}`} {
		_, err := runreport.Parse([]byte(doc))
		require.ErrorIs(t, err, runreport.ErrEmpty, doc)
	}
	_, err := runreport.Parse([]byte(`{"source":"executor","colour":"green"}`))
	requirePointer(t, err, "/colour")
	_, err = runreport.Parse([]byte(`not json`))
	require.Error(t, err)
	require.False(t, errors.Is(err, runreport.ErrEmpty))
}

func TestPresets_CommandLines(t *testing.T) {
	t.Parallel()
	ps := runreport.Presets()
	var names []string
	for _, p := range ps {
		names = append(names, string(p.Name))
		require.Contains(t, p.Command, `"$AZOLLA_INPUT_FILE"`, p.Name)
		line, err := p.CommandLine(nil)
		require.NoError(t, err)
		require.Equal(t, p.Command, line)
	}
	require.Equal(t, []string{"aider", "claude-code", "codex"}, names)

	claude, err := runreport.LookupPreset("claude-code")
	require.NoError(t, err)
	line, err := claude.CommandLine(ptr(1.25))
	require.NoError(t, err)
	require.Equal(t, `claude -p "$(cat "$AZOLLA_INPUT_FILE")" --output-format json --permission-mode acceptEdits --max-budget-usd 1.25`, line)
	for _, bad := range []float64{0, -1} {
		_, err := claude.CommandLine(ptr(bad))
		require.Error(t, err, bad)
	}

	codex, err := runreport.LookupPreset("codex")
	require.NoError(t, err)
	line, err = codex.CommandLine(ptr(1.25))
	require.NoError(t, err)
	require.Equal(t, codex.Command, line, "codex has no spending cap of its own")

	_, err = runreport.LookupPreset("cursor")
	require.ErrorContains(t, err, `unknown agent preset "cursor" (valid presets: aider, claude-code, codex)`)
}

// Whatever the bytes, a parser returns an error or a report that passes
// the schema, and never panics.
func FuzzPresetParsers(f *testing.F) {
	for _, name := range []string{"claude-code.json", "codex.jsonl", "aider.txt"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"type":"result","total_cost_usd":-1}`))
	f.Add([]byte("Tokens: 1e9k sent, 1 received. Cost: $1 message, $1 session."))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, p := range runreport.Presets() {
			r, err := p.Parse(data)
			if err == nil {
				if verr := runreport.Validate(r); verr != nil {
					t.Fatalf("%s: returned a report that fails the schema: %v", p.Name, verr)
				}
			}
		}
	})
}
