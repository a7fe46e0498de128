package patch_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph/patch"
	"github.com/azolla/azolla/internal/executor/gitops"
	"github.com/azolla/azolla/internal/executor/patchgen"
	"github.com/azolla/azolla/internal/executor/redact"
)

// talker is a generator whose run said something.
type talker struct {
	patch string
	said  patchgen.Transcript
}

func (talker) Name() string { return "command" }

func (g talker) Generate(context.Context, patchgen.Input) (patchgen.Output, error) {
	said := g.said
	return patchgen.Output{Patch: g.patch, Notes: "talked", Transcript: &said}, nil
}

// withTalker is tb's Patch whose default generator is g, keeping
// transcripts of up to max bytes.
func (tb *testBundle) withTalker(g talker, max int) *patch.Patch {
	return patch.New(patch.Options{Dir: tb.gitDir, Generators: map[string]patchgen.Generator{"command": g},
		Default: "command", Author: author, Policy: gitops.PatchPolicy{MaxBytes: 1 << 20}, FileListLimit: 2,
		Secrets: tb.secrets, TranscriptMax: max})
}

// transcriptOf decompresses the transcript a result carries to the store.
func transcriptOf(t *testing.T, ref *domain.TranscriptRef) string {
	t.Helper()
	require.NotNil(t, ref)
	text, err := (&domain.Transcript{WorkOrderID: "wo", Gzip: ref.Gzip}).Text()
	require.NoError(t, err)
	require.Equal(t, int64(len(text)), ref.Bytes)
	return text
}

// The bundle carries the run's transcript, redacted of the worker's
// secrets, whether or not the run left a patch.
func TestExecute_TranscriptIsRedactedAndCarriedByTheBundle(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	tb.secrets = redact.New(redact.Secret{Name: "ANTHROPIC_API_KEY", Value: "sk-ant-canary-0451"})
	said := patchgen.Transcript{Stdout: patchgen.Tail{Text: "using key sk-ant-canary-0451\n", Total: 29},
		Report: patchgen.Tail{Text: "agent: done\n", Total: 12}, ReportFrom: "inline"}
	for name, diff := range map[string]string{"with a patch": goodPatch, "without": ""} {
		t.Run(name, func(t *testing.T) {
			tb.p = tb.withTalker(talker{patch: diff, said: said}, 1<<20)
			res := execute(t, tb, tb.request(t, "talk", ""))
			text := transcriptOf(t, res.Metadata.Transcript)
			require.NotContains(t, text, "sk-ant-canary-0451")
			require.Contains(t, text, "using key [redacted:ANTHROPIC_API_KEY]\n")
			require.True(t, strings.HasSuffix(text, "==== transcript (inline) ====\nagent: done\n"), text)
			require.False(t, res.Metadata.Transcript.Truncated)
		})
	}
}

// A transcript longer than the cap keeps its end and says what was cut; a
// cap of 0 keeps none.
func TestExecute_TranscriptIsCappedKeepingItsEnd(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	long := strings.Repeat("early line\n", 100) + "the last word\n"
	said := patchgen.Transcript{Stdout: patchgen.Tail{Text: long, Total: int64(len(long))}}

	tb.p = tb.withTalker(talker{said: said}, 64)
	res := execute(t, tb, tb.request(t, "long", ""))
	ref := res.Metadata.Transcript
	text := transcriptOf(t, ref)
	require.True(t, ref.Truncated)
	require.Equal(t, int64(len(said.Render())), ref.OriginalBytes)
	require.True(t, strings.HasPrefix(text, "[azolla: transcript cut to its last 64 of "), text)
	require.True(t, strings.HasSuffix(text, "the last word\n"), text)

	tb.p = tb.withTalker(talker{said: said}, 0)
	res = execute(t, tb, tb.request(t, "none", ""))
	require.Nil(t, res.Metadata.Transcript)
}
