package gitea_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/forge/gitea"
)

// pagedStub serves pages[page-1] at path (an empty list past the end) with
// total in X-Total-Count, whatever limit is asked for.
func pagedStub(t *testing.T, path string, total int, pages ...[]map[string]any) *gitea.Forge {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path {
			http.NotFound(w, r)
			return
		}
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		items := []map[string]any{}
		if page >= 1 && page <= len(pages) {
			items = pages[page-1]
		}
		w.Header().Set("X-Total-Count", strconv.Itoa(total))
		_ = json.NewEncoder(w).Encode(items)
	}))
	t.Cleanup(srv.Close)
	f, err := gitea.New(gitea.Options{BaseURL: srv.URL, Owner: "o", Repo: "r", Token: "t", PageSize: 2})
	require.NoError(t, err)
	return f
}

func TestList_APageOfHiddenPendingReviewsIsNotTheEnd(t *testing.T) {
	t.Parallel()
	// Gitea pages reviews, then drops the pending ones the token may not
	// see: page 1 held two of them.
	f := pagedStub(t, "/api/v1/repos/o/r/pulls/1/reviews", 4,
		[]map[string]any{},
		[]map[string]any{{"id": 3, "state": "APPROVED"}, {"id": 4, "state": "COMMENT", "body": "nit"}})
	got, _, err := f.Reviews(context.Background(), 1, "")
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, forge.ReviewApproved, got[0].State)
}

func TestList_PagesCutShortByTheServerAreAllRead(t *testing.T) {
	t.Parallel()
	// The server's MAX_RESPONSE_ITEMS is 1, below the page size asked for.
	f := pagedStub(t, "/api/v1/repos/o/r/commits/abc/statuses", 3,
		[]map[string]any{{"id": 1, "context": "a", "status": "success"}},
		[]map[string]any{{"id": 2, "context": "b", "status": "success"}},
		[]map[string]any{{"id": 3, "context": "c", "status": "failure"}})
	c, err := f.Checks(context.Background(), "abc")
	require.NoError(t, err)
	require.Len(t, c.Checks, 3)
	require.Equal(t, forge.ChecksFailure, c.State)
}

func TestIssues_AnIssueOpenedWhilePagesAreReadIsKeptOnceAndPullsLeftOut(t *testing.T) {
	t.Parallel()
	// Gitea lists issues newest created first: #4 was opened after page 1
	// was read, pushing #2 onto page 2 again. A pull request slipped in as
	// if type=issues were ignored.
	f := pagedStub(t, "/api/v1/repos/o/r/issues", 5,
		[]map[string]any{{"number": 3, "updated_at": "2026-05-04T10:00:03Z"}, {"number": 2, "updated_at": "2026-05-04T10:00:05Z"}},
		[]map[string]any{{"number": 2, "updated_at": "2026-05-04T10:00:05Z"}, {"number": 1, "updated_at": "2026-05-04T10:00:01Z"}},
		[]map[string]any{{"number": 5, "updated_at": "2026-05-04T10:00:00Z", "pull_request": map[string]any{"merged": false}}})
	got, err := f.Issues(context.Background(), time.Time{})
	require.NoError(t, err)
	var numbers []int
	for _, is := range got {
		numbers = append(numbers, is.Number)
	}
	require.Equal(t, []int{1, 3, 2}, numbers, "each once, oldest update first, no pull request")
}
