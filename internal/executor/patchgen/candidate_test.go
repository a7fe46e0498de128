package patchgen_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/patchgen"
	"github.com/azolla/azolla/internal/executor/sandbox"
	"github.com/azolla/azolla/internal/executor/sandbox/sandboxtest"
)

// A candidate run's agent is told which candidate it is; a single run's
// agent is told nothing, so that it behaves as before.
func TestCommand_TellsTheAgentWhichCandidateItIs(t *testing.T) {
	t.Parallel()
	g := patchgen.NewCommand(patchgen.CommandOptions{Executor: sandboxtest.Unconfined(t, sandbox.Policy{}),
		Run: `echo "${AZOLLA_CANDIDATE-none}" > hello.txt`, WorktreeDiff: worktreeDiff})
	for k, want := range map[int]string{0: "none", 1: "1", 3: "3"} {
		t.Run(strconv.Itoa(k), func(t *testing.T) {
			t.Parallel()
			in := newInput(newRepo(t))
			in.Candidate = k
			out, err := g.Generate(t.Context(), in)
			require.NoError(t, err)
			require.Contains(t, out.Patch, "\n+"+want+"\n")
		})
	}
}

// Candidate 1 asks what a single run asks; the others ask with their own
// seed and a temperature raised a step per candidate, up to the cap. No
// temperature is sent where none is configured.
func TestOpenAI_VariesSamplingPerCandidate(t *testing.T) {
	t.Parallel()
	temp := 0.2
	for _, tt := range []struct {
		name      string
		temp      *float64
		candidate int
		wantTemp  any // nil: not sent
		wantSeed  any // nil: not sent
	}{
		{"single run", &temp, 0, 0.2, nil},
		{"candidate 1", &temp, 1, 0.2, nil},
		{"candidate 2", &temp, 2, 0.4, 2.0},
		{"candidate 3", &temp, 3, 0.6, 3.0},
		{"capped", &temp, 9, 1.2, 9.0},
		{"no temperature configured", nil, 2, nil, 2.0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newChatServer(t, completion("```diff\n"+helloDiff+"```", "stop"))
			g, err := patchgen.NewOpenAI(patchgen.OpenAIOptions{BaseURL: srv.URL, Model: "patcher", Temperature: tt.temp})
			require.NoError(t, err)
			in := newInput("")
			in.Candidate = tt.candidate
			out, err := g.Generate(t.Context(), in)
			require.NoError(t, err)
			require.Equal(t, helloDiff, out.Patch)
			body := <-srv.bodies
			if tt.wantTemp == nil {
				require.NotContains(t, body, "temperature")
			} else {
				require.InDelta(t, tt.wantTemp, body["temperature"], 1e-9)
			}
			if tt.wantSeed == nil {
				require.NotContains(t, body, "seed")
			} else {
				require.Equal(t, tt.wantSeed, body["seed"])
				require.Contains(t, out.Notes, "seed "+strconv.Itoa(tt.candidate))
			}
		})
	}
}

// Chat is never a candidate run: it asks with the configured sampling.
func TestOpenAI_ChatSendsNoSeed(t *testing.T) {
	t.Parallel()
	srv := newChatServer(t, completion("fine", "stop"))
	temp := 0.7
	g, err := patchgen.NewOpenAI(patchgen.OpenAIOptions{BaseURL: srv.URL, Model: "patcher", Temperature: &temp})
	require.NoError(t, err)
	_, err = g.Chat(t.Context(), "system", "user")
	require.NoError(t, err)
	body := <-srv.bodies
	require.NotContains(t, body, "seed")
	require.InDelta(t, 0.7, body["temperature"], 1e-9)
}
