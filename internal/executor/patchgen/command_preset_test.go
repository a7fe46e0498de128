package patchgen_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/patchgen"
	"github.com/azolla/azolla/internal/executor/runreport"
	"github.com/azolla/azolla/internal/executor/sandbox"
	"github.com/azolla/azolla/internal/executor/sandbox/sandboxtest"
)

// fixture is the path of a preset's recorded output in package runreport.
func fixture(t *testing.T, name string) string {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("..", "runreport", "testdata", name))
	require.NoError(t, err)
	require.FileExists(t, path)
	return path
}

// standIn puts an executable called agent on a PATH of its own that
// edits hello.txt, checks that it was called with wantArg, and prints
// script's output in place of the real agent's. It returns the
// executor's environment that puts it first on PATH.
func standIn(t *testing.T, agent, wantArg, script string) map[string]string {
	t.Helper()
	bin := t.TempDir()
	body := "#!/bin/sh\n" +
		"# A stand-in for " + agent + ": it edits the worktree as the agent would and\n" +
		"# prints the agent's machine-readable output, recorded in a fixture.\n" +
		"case \" $* \" in *' " + wantArg + " '*) ;; *) echo \"" + agent + ": missing " + wantArg + " in $*\" >&2; exit 2;; esac\n" +
		"sed -i 's/world/there/' hello.txt\n" + script + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(bin, agent), []byte(body), 0o755))
	return map[string]string{"PATH": bin + ":" + os.Getenv("PATH")}
}

// presetCommand is the command generator of preset p with no command line
// of its own, its agent a stand-in running script.
func presetCommand(t *testing.T, p runreport.Preset, agent, wantArg, script string, maxOutput int) *patchgen.Command {
	t.Helper()
	return patchgen.NewCommand(patchgen.CommandOptions{
		Executor:     sandboxtest.Unconfined(t, sandbox.Policy{Env: standIn(t, agent, wantArg, script)}),
		WorktreeDiff: worktreeDiff, Preset: &p, MaxOutput: maxOutput,
	})
}

// Each preset runs its agent by its default command line, and the report
// comes from the agent's own output, replayed from the fixture, exactly as
// the preset's parser reads the fixture.
func TestCommand_PresetReadsTheAgentsOutput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		preset, agent, wantArg, fixture string
	}{
		{"claude-code", "claude", "--output-format", "claude-code.json"},
		{"codex", "codex", "--json", "codex.jsonl"},
		{"aider", "aider", "--yes-always", "aider.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.preset, func(t *testing.T) {
			t.Parallel()
			p, err := runreport.LookupPreset(tt.preset)
			require.NoError(t, err)
			data, err := os.ReadFile(fixture(t, tt.fixture))
			require.NoError(t, err)
			want, err := p.Parse(data)
			require.NoError(t, err)

			g := presetCommand(t, p, tt.agent, tt.wantArg, `cat "`+fixture(t, tt.fixture)+`"`, 0)
			out, err := g.Generate(t.Context(), newInput(newRepo(t)))
			require.NoError(t, err)
			require.Contains(t, out.Patch, "+there", out.Notes)
			require.NotNil(t, out.Report, out.Notes)
			require.Equal(t, want, *out.Report)
			require.Equal(t, domain.ReportSource(tt.preset), out.Report.Source)
			require.NotNil(t, out.Transcript)
			require.Equal(t, int64(len(data)), out.Transcript.Stdout.Total, "the agent's output is in the transcript")
		})
	}
}

// A stream longer than what is kept of its head is read from its end,
// where Codex's last usage event (the thread's total) is.
func TestCommand_PresetReadsTheEndOfALongStream(t *testing.T) {
	t.Parallel()
	p, err := runreport.LookupPreset("codex")
	require.NoError(t, err)
	data, err := os.ReadFile(fixture(t, "codex.jsonl"))
	require.NoError(t, err)
	want, err := p.Parse(data)
	require.NoError(t, err)

	script := `i=0; while [ $i -lt 200 ]; do echo '{"type":"item.started","item":{"type":"reasoning","text":"thinking"}}'; ` +
		`i=$((i+1)); done; cat "` + fixture(t, "codex.jsonl") + `"`
	g := presetCommand(t, p, "codex", "--json", script, len(data)+64)
	out, err := g.Generate(t.Context(), newInput(newRepo(t)))
	require.NoError(t, err)
	require.NotNil(t, out.Report, out.Notes)
	require.Equal(t, want.Tokens, out.Report.Tokens)
	require.Equal(t, want.Summary, out.Report.Summary)
}

// The agent's own report file wins over its preset's parser; output the
// parser cannot read is a note on a run that goes on.
func TestCommand_PresetYieldsToTheReportFileAndFailsIntoANote(t *testing.T) {
	t.Parallel()
	p, err := runreport.LookupPreset("claude-code")
	require.NoError(t, err)

	own := presetCommand(t, p, "claude", "-p", `cat "`+fixture(t, "claude-code.json")+`"; `+
		`printf '{"model":"own","cost_usd":0.5}' > "$AZOLLA_REPORT_FILE"`, 0)
	out, err := own.Generate(t.Context(), newInput(newRepo(t)))
	require.NoError(t, err)
	require.NotNil(t, out.Report)
	require.Equal(t, "own", out.Report.Model)
	require.Equal(t, domain.ReportFromExecutor, out.Report.Source)

	garbled := presetCommand(t, p, "claude", "-p", `echo 'Error: not logged in'`, 0)
	out, err = garbled.Generate(t.Context(), newInput(newRepo(t)))
	require.NoError(t, err)
	require.Contains(t, out.Patch, "+there", "the run's patch is kept")
	require.Nil(t, out.Report)
	require.Contains(t, out.Notes, "no run report: the claude-code preset could not read one from the agent's stdout:")
}

// An explicit command line overrides the preset's; its parser still reads
// the output.
func TestCommand_ExplicitRunOverridesThePresetsCommandLine(t *testing.T) {
	t.Parallel()
	p, err := runreport.LookupPreset("aider")
	require.NoError(t, err)
	g := patchgen.NewCommand(patchgen.CommandOptions{
		Executor:     sandboxtest.Unconfined(t, sandbox.Policy{}),
		Run:          `sed -i 's/world/there/' hello.txt; cat "` + fixture(t, "aider.txt") + `"`,
		WorktreeDiff: worktreeDiff, Preset: &p,
	})
	out, err := g.Generate(t.Context(), newInput(newRepo(t)))
	require.NoError(t, err)
	require.NotNil(t, out.Report, out.Notes)
	require.Equal(t, domain.ReportFromAider, out.Report.Source)
	require.False(t, strings.Contains(out.Notes, "no run report"), out.Notes)
}
