package patch_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/patchgen"
)

// seeing records what a generator was given and proposes nothing.
type seeing struct{ in patchgen.Input }

func (s *seeing) Name() string { return "openai" }

func (s *seeing) Generate(_ context.Context, in patchgen.Input) (patchgen.Output, error) {
	s.in = in
	return patchgen.Output{Notes: "nothing"}, nil
}

func (s *seeing) KeepsWorktree() bool { return true }

func (s *seeing) ReadsHouseRules() bool { return true }

// The generator is given the repository's AGENTS.md as the base commit has
// it; a repository without one gives none.
func TestExecute_TheGeneratorGetsTheBaseCommitsAgentsMD(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	saw := &seeing{}
	tb.p = tb.newPatch(map[string]patchgen.Generator{"openai": saw})
	req := tb.request(t, "rules-none", "")
	req.Objective.Generator = "openai"
	_, err := tb.p.Execute(context.Background(), req)
	require.NoError(t, err)
	require.Empty(t, saw.in.HouseRules)

	write(t, tb.repo, "AGENTS.md", "Run make check first.\n")
	git(t, tb.repo, "add", "-A")
	git(t, tb.repo, "commit", "-q", "-m", "house rules")
	req = tb.request(t, "rules", "")
	req.Objective.Generator = "openai"
	_, err = tb.p.Execute(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, "Run make check first.\n", saw.in.HouseRules)
}
