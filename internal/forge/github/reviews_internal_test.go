package github

import (
	"testing"
	"time"

	gh "github.com/google/go-github/v89/github"
	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/forge"
)

func TestReviewComment_Lines(t *testing.T) {
	t.Parallel()
	n := func(v int) *int { return &v }
	s := func(v string) *string { return &v }
	for name, tc := range map[string]struct {
		c             gh.PullRequestComment
		line, oldLine int
	}{
		"right side":               {c: gh.PullRequestComment{Line: n(7), OriginalLine: n(4), Side: s("RIGHT")}, line: 7},
		"no side is the right one": {c: gh.PullRequestComment{Line: n(7)}, line: 7},
		"left side":                {c: gh.PullRequestComment{Line: n(3), OriginalLine: n(3), Side: s("LEFT")}, oldLine: 3},
		"outdated right":           {c: gh.PullRequestComment{OriginalLine: n(4), Side: s("RIGHT")}, line: 4},
		"outdated left":            {c: gh.PullRequestComment{OriginalLine: n(2), Side: s("LEFT")}, oldLine: 2},
		"on the whole file":        {c: gh.PullRequestComment{SubjectType: s("file"), Line: n(1), Side: s("RIGHT")}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := reviewComment(&tc.c)
			require.Equal(t, tc.line, got.Line)
			require.Equal(t, tc.oldLine, got.OldLine)
		})
	}
}

func TestReviewCursor_RemembersTheLastMinute(t *testing.T) {
	t.Parallel()
	at := time.Unix(1_800_000_000, 0)
	review := func(id int64, ago time.Duration) *gh.PullRequestReview {
		return &gh.PullRequestReview{ID: &id, SubmittedAt: &gh.Timestamp{Time: at.Add(-ago)}}
	}
	read := []*gh.PullRequestReview{review(1, 2*time.Minute), review(3, 30*time.Second), review(4, 0)}
	cur := reviewCursor{}.advance(read)
	require.Equal(t, forge.Cursor("1800000000:3,4"), cur.text(), "review 1 is older than the lookback")

	parsed, err := parseCursor(cur.text())
	require.NoError(t, err)
	require.Equal(t, cur, parsed)
	for _, r := range read {
		require.False(t, parsed.isNew(r), "review %d was read", r.GetID())
	}
	require.True(t, parsed.isNew(review(2, 10*time.Second)), "submitted in the minute before, seen late")
	require.True(t, parsed.isNew(review(5, -time.Second)), "submitted after")
	require.False(t, parsed.isNew(review(0, 5*time.Minute)), "long before: read long ago")
	require.Equal(t, cur, parsed.advance(read), "nothing new, the same cursor")
}
