package patchgen_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/patchgen"
	"github.com/azolla/azolla/internal/executor/sandbox"
	"github.com/azolla/azolla/internal/executor/sandbox/sandboxtest"
)

// The transcript holds the ends of stdout and stderr and the report's
// transcript, inline or from a file the run wrote under
// $AZOLLA_ARTIFACT_DIR; the report's comes last.
func TestCommand_TranscriptFromTheRun(t *testing.T) {
	t.Parallel()
	inline, _ := generate(t, `echo working; echo careful >&2; `+
		`printf '{"summary":"ok","transcript":{"text":"user: fix it\\nagent: fixed"}}' > "$AZOLLA_REPORT_FILE"`)
	require.NotNil(t, inline.Transcript)
	doc := inline.Transcript.Render()
	require.Equal(t, "==== stdout ====\nworking\n==== stderr ====\ncareful\n"+
		"==== transcript (inline) ====\nuser: fix it\nagent: fixed\n", doc)

	file, _ := generate(t, `mkdir -p "$AZOLLA_ARTIFACT_DIR/logs" && printf 'turn 1\nturn 2\n' > "$AZOLLA_ARTIFACT_DIR/logs/run.txt" && `+
		`printf '{"turns":2,"transcript":{"path":"logs/run.txt"}}' > "$AZOLLA_REPORT_FILE"`)
	require.NotNil(t, file.Transcript)
	require.Equal(t, "==== transcript (logs/run.txt) ====\nturn 1\nturn 2\n", file.Transcript.Render())

	silent, _ := generate(t, `true`)
	require.Nil(t, silent.Transcript, "a run that said nothing has no transcript")
}

// A transcript path that is a symbolic link is not followed: it could name
// any file the worker may read.
func TestCommand_TranscriptFileMayNotBeASymlink(t *testing.T) {
	t.Parallel()
	out, _ := generate(t, `ln -s /etc/passwd "$AZOLLA_ARTIFACT_DIR/t.txt" && `+
		`printf '{"turns":1,"transcript":{"path":"t.txt"}}' > "$AZOLLA_REPORT_FILE"`)
	require.NotNil(t, out.Transcript)
	doc := out.Transcript.Render()
	require.Contains(t, doc, "(not read: transcript file t.txt: a symbolic link is not followed)")
	require.NotContains(t, doc, "root:")
}

// A run stopped by its budget keeps what it said for the transcript.
func TestCommand_StoppedRunKeepsItsTranscript(t *testing.T) {
	t.Parallel()
	g := patchgen.NewCommand(patchgen.CommandOptions{Executor: sandboxtest.Unconfined(t, sandbox.Policy{}),
		Run: `echo before the end; sleep 30`, WorktreeDiff: worktreeDiff})
	budget := errors.New("budget")
	ctx, cancel := context.WithTimeoutCause(t.Context(), 500*time.Millisecond, budget)
	defer cancel()
	out, err := g.Generate(ctx, newInput(newRepo(t)))
	require.ErrorIs(t, err, budget)
	require.NotNil(t, out.Transcript)
	require.True(t, strings.HasPrefix(out.Transcript.Render(), "==== stdout ====\nbefore the end\n"))
}

// A stalled run keeps what it said before it fell silent.
func TestCommand_StalledRunKeepsItsTranscript(t *testing.T) {
	t.Parallel()
	ex := sandboxtest.Unconfined(t, sandbox.Policy{}).WithStallTimeout(300 * time.Millisecond)
	g := patchgen.NewCommand(patchgen.CommandOptions{Executor: ex, Run: `echo waiting for a login; sleep 30`,
		WorktreeDiff: worktreeDiff})
	out, err := g.Generate(t.Context(), newInput(newRepo(t)))
	var stalled *sandbox.StallError
	require.ErrorAs(t, err, &stalled)
	require.NotNil(t, out.Transcript)
	require.Contains(t, out.Transcript.Render(), "==== stdout ====\nwaiting for a login\n")
}
