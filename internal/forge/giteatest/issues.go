package giteatest

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/forge"
)

// OpenIssue opens an issue as u, then has Admin add labels (created when
// the repository lacks them) and assign assignees: Gitea drops both from
// an issue opened by someone who may not write to the repository.
func (r *Repo) OpenIssue(t testing.TB, u User, title, body string, labels, assignees []string) int {
	t.Helper()
	ctx := context.Background()
	var issue struct {
		Number int `json:"number"`
	}
	require.NoError(t, r.Server.API(ctx, u.Token, http.MethodPost, r.Path("/issues"),
		map[string]string{"title": title, "body": body}, &issue), "open an issue as %s", u.Name)
	path := r.Path("/issues/" + strconv.Itoa(issue.Number))
	if len(labels) > 0 {
		ids := make([]int64, 0, len(labels))
		for _, name := range labels {
			ids = append(ids, r.labelID(t, name))
		}
		require.NoError(t, r.Server.API(ctx, r.Server.Admin.Token, http.MethodPost, path+"/labels",
			map[string]any{"labels": ids}, nil), "label issue #%d", issue.Number)
	}
	if len(assignees) > 0 {
		require.NoError(t, r.Server.API(ctx, r.Server.Admin.Token, http.MethodPatch, path,
			map[string]any{"assignees": assignees}, nil), "assign issue #%d", issue.Number)
	}
	return issue.Number
}

// LabelIssue adds label to issue number as u (created as Admin when the
// repository lacks it).
func (r *Repo) LabelIssue(t testing.TB, u User, number int, label string) {
	t.Helper()
	id := r.labelID(t, label)
	require.NoError(t, r.Server.API(context.Background(), u.Token, http.MethodPost,
		r.Path("/issues/"+strconv.Itoa(number)+"/labels"), map[string]any{"labels": []int64{id}}, nil),
		"label issue #%d %q as %s", number, label, u.Name)
}

// UnlabelIssue removes label from issue number as u.
func (r *Repo) UnlabelIssue(t testing.TB, u User, number int, label string) {
	t.Helper()
	id := r.labelID(t, label)
	require.NoError(t, r.Server.API(context.Background(), u.Token, http.MethodDelete,
		r.Path("/issues/"+strconv.Itoa(number)+"/labels/"+strconv.FormatInt(id, 10)), nil, nil),
		"unlabel issue #%d %q as %s", number, label, u.Name)
}

// labelID is the id of the repository's label name, created when missing.
func (r *Repo) labelID(t testing.TB, name string) int64 {
	t.Helper()
	ctx := context.Background()
	var labels []struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	}
	require.NoError(t, r.Server.API(ctx, r.Server.Admin.Token, http.MethodGet, r.Path("/labels?limit=50"), nil, &labels))
	for _, l := range labels {
		if l.Name == name {
			return l.ID
		}
	}
	var made struct {
		ID int64 `json:"id"`
	}
	require.NoError(t, r.Server.API(ctx, r.Server.Admin.Token, http.MethodPost, r.Path("/labels"),
		map[string]string{"name": name, "color": "#ee0701"}, &made), "create label %q", name)
	return made.ID
}

// CloseIssue closes an issue as Admin.
func (r *Repo) CloseIssue(t testing.TB, number int) {
	t.Helper()
	require.NoError(t, r.Server.API(context.Background(), r.Server.Admin.Token, http.MethodPatch,
		r.Path("/issues/"+strconv.Itoa(number)), map[string]string{"state": "closed"}, nil))
}

// CommentAs comments on a thread's conversation (an issue's comments,
// for a pull request too) as u and returns the comment's id.
func (r *Repo) CommentAs(t testing.TB, u User, on forge.Thread, body string) string {
	t.Helper()
	var c struct {
		ID int64 `json:"id"`
	}
	require.NoError(t, r.Server.API(context.Background(), u.Token, http.MethodPost,
		r.Path("/issues/"+strconv.Itoa(on.Number)+"/comments"), map[string]string{"body": body}, &c),
		"comment on %s as %s", on, u.Name)
	return strconv.FormatInt(c.ID, 10)
}
