package patchgen_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/patchgen"
	"github.com/azolla/azolla/internal/executor/runreport"
	"github.com/azolla/azolla/internal/executor/sandbox"
	"github.com/azolla/azolla/internal/executor/sandbox/sandboxtest"
)

// claudeStandIn is a stand-in for Claude Code that records in $HOME/args
// whether it was asked to resume a session, and which, keeps its session as Claude Code does (under
// ~/.claude/projects/<working directory, '/' made '-'>/<id>.jsonl), says
// whether --resume found it, and prints the recorded result, whose
// session_id is fixedSession.
const claudeStandIn = `args="$*"
case " $args " in *" --resume "*) echo "resume ${args##*--resume }";; *) echo new;; esac >> "$HOME/args"
id=6f0a4c1e-2b7d-4e39-9c55-0d1e8a3b7f42
dir="$HOME/.claude/projects/$(pwd -P | tr / -)"
case " $* " in *" --resume $id "*)
  test -f "$dir/$id.jsonl" || { echo "No conversation found with session ID: $id" >&2; exit 1; }
  echo resumed >> "$dir/$id.jsonl";;
*) mkdir -p "$dir"; echo started > "$dir/$id.jsonl";;
esac
sed -i 's/world/there/' hello.txt
cat "%s"`

const fixedSession = "6f0a4c1e-2b7d-4e39-9c55-0d1e8a3b7f42"

// The Claude Code preset continues the session the round before reported:
// the next round, in a new worktree but the objective's same home, runs
// with --resume <that id>, its session carried to the new working
// directory; without a session, or with one not in the home, it starts a
// new one and says why.
func TestCommand_ClaudeCodeContinuesTheSessionOfTheRoundBefore(t *testing.T) {
	t.Parallel()
	p, err := runreport.LookupPreset("claude-code")
	require.NoError(t, err)
	bin := t.TempDir()
	script := strings.Replace(claudeStandIn, "%s", fixture(t, "claude-code.json"), 1)
	require.NoError(t, os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\n"+script+"\n"), 0o755))
	g := patchgen.NewCommand(patchgen.CommandOptions{
		Executor:     sandboxtest.Unconfined(t, sandbox.Policy{Env: map[string]string{"PATH": bin + ":" + os.Getenv("PATH")}}),
		WorktreeDiff: worktreeDiff, Preset: &p})
	home := filepath.Join(t.TempDir(), "homes", "obj-1")

	first := newInput(newRepo(t))
	first.Home = home
	out, err := g.Generate(t.Context(), first)
	require.NoError(t, err)
	require.NotNil(t, out.Report, out.Notes)
	require.Equal(t, fixedSession, out.Report.SessionID)

	second := newInput(newRepo(t))
	second.Home, second.Session = home, out.Report.SessionID
	out, err = g.Generate(t.Context(), second)
	require.NoError(t, err)
	require.Contains(t, out.Notes, "Continued the agent's session "+fixedSession)
	require.Contains(t, out.Patch, "+there", "the agent found its session in the new worktree: %s", out.Notes)
	args, err := os.ReadFile(filepath.Join(home, "args"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(args)), "\n")
	require.Len(t, lines, 2, "the home outlives the round")
	require.Equal(t, []string{"new", "resume " + fixedSession}, lines)

	third := newInput(newRepo(t))
	third.Home, third.Session = filepath.Join(t.TempDir(), "another"), fixedSession
	out, err = g.Generate(t.Context(), third)
	require.NoError(t, err)
	require.Contains(t, out.Notes, "was not continued")
	require.Contains(t, out.Notes, "this round started a new one")

	hostile := newInput(newRepo(t))
	hostile.Home, hostile.Session = home, "x; rm -rf ~"
	out, err = g.Generate(t.Context(), hostile)
	require.NoError(t, err)
	require.Contains(t, out.Notes, "is not one to put on a command line")
}
