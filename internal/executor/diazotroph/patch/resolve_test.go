package patch_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/diazotroph"
)

func TestResolve_ReadsTheBaseBranchHeadAndABoundedListing(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	ctx := context.Background()
	want := strings.TrimSpace(git(t, tb.repo, "rev-parse", "main"))

	got, err := tb.p.Resolve(ctx, tb.repo, "")
	require.NoError(t, err)
	require.Equal(t, "main", got.BaseBranch, "no base branch means the default branch")
	require.Equal(t, want, got.CommitSHA)
	require.Len(t, got.Files, 2, "the listing is bounded")
	require.Equal(t, 3, got.TotalFiles)

	// A new upstream commit is seen at the next resolve.
	write(t, tb.repo, "CHANGES.md", "v2\n")
	git(t, tb.repo, "add", "CHANGES.md")
	git(t, tb.repo, "commit", "-q", "-m", "v2")
	git(t, tb.repo, "branch", "release/v2")
	got, err = tb.p.Resolve(ctx, tb.repo, "release/v2")
	require.NoError(t, err)
	require.Equal(t, strings.TrimSpace(git(t, tb.repo, "rev-parse", "main")), got.CommitSHA)
	require.NotEqual(t, want, got.CommitSHA)
	require.Equal(t, 4, got.TotalFiles)
}

func TestResolve_TargetsAHumanMustFixAreBad(t *testing.T) {
	t.Parallel()
	tb := setup(t)
	cases := []struct{ name, repo, branch, want string }{
		{"missing branch", tb.repo, "develop", `has no branch "develop"`},
		{"missing repository", filepath.Join(tb.root, "nope"), "", "no such file or directory"},
		{"not a repository", tb.outside, "", "cannot be read"},
		{"relative path", "upstream", "", "upstream"},
		{"option as repository", "--upload-pack=touch owned", "", "--upload-pack"},
		{"remote helper", "ext::sh -c touch% owned", "", "ext::"},
		{"hostile branch", tb.repo, "-x", "-x"},
		{"dotted branch", tb.repo, "a..b", "a..b"},
		{"lock branch", tb.repo, "x.lock", "x.lock"},
	}
	for _, tc := range cases {
		_, err := tb.p.Resolve(context.Background(), tc.repo, tc.branch)
		require.ErrorIs(t, err, diazotroph.ErrBadTarget, tc.name)
		require.ErrorContains(t, err, tc.want, tc.name)
	}
	tb.requireUntouched(t)
}
