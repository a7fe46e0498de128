package integration

import (
	"context"
	"encoding/base64"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/forge/giteatest"
	"github.com/azolla/azolla/workflows"
)

// A pull request whose base moved on with a conflicting change: Gitea
// says it cannot merge; the next round merges the base in, its agent
// rewrites the conflicting file, and its commit is a merge of the
// reviewed head and the base, pushed without force: Gitea finds the pull
// request mergeable again.
func TestForge_ARoundOnAConflictingPullRequestMergesTheBase(t *testing.T) {
	t.Parallel()
	w := setupForge(t, giteatest.Shared(t), nil)
	ctx := context.Background()
	id := uniqueID("conflict")
	w.approve(t, id)
	pr := w.waitRound(t, id, 1)

	// The base gets a task.txt of its own: both sides added the file.
	var created struct {
		Commit struct {
			SHA string `json:"sha"`
		} `json:"commit"`
	}
	require.NoError(t, w.gitea.API(ctx, w.gitea.Admin.Token, http.MethodPost, w.repo.Path("/contents/task.txt"),
		map[string]string{"branch": "main", "message": "the base writes its own task",
			"content": base64.StdEncoding.EncodeToString([]byte("the base's task\n"))}, &created))
	base := created.Commit.SHA
	require.NotEmpty(t, base)
	require.Eventually(t, func() bool { return w.mergeable(t, pr.Number) == "false" }, time.Minute, 100*time.Millisecond,
		"Gitea finds the conflict")

	_, err := w.starter.Decide(ctx, id, workflows.Retry, workflows.Decision{By: "ana", Comment: "rebuild on main"})
	require.NoError(t, err)
	pr2 := w.waitRound(t, id, 2)
	require.Equal(t, []string{pr.HeadSHA, base}, w.parents(t, pr2.HeadSHA), "a merge of the reviewed head and the base")
	b, err := w.store.GetOutputBundle(ctx, pr2.WorkOrderID)
	require.NoError(t, err)
	require.Contains(t, b.Notes, "was merged in, 1 file(s) conflicting (task.txt), left to the agent to resolve")
	require.Contains(t, b.Content, "-the base's task", "the bundle is against the base it merged")
	require.NotRegexp(t, `(?m)^(<<<<<<<|>>>>>>>) `, w.file(t, "task.txt", pr2.HeadSHA), "the agent resolved the conflict")
	require.Eventually(t, func() bool { return w.mergeable(t, pr.Number) == "true" }, time.Minute, 100*time.Millisecond,
		"the pull request merges again")
	w.requireAuditClean(t)
}

// mergeable is what Gitea says of pull request number: "true", "false".
func (w *forgeWorld) mergeable(t testing.TB, number int) string {
	t.Helper()
	var p struct {
		Mergeable bool `json:"mergeable"`
	}
	require.NoError(t, w.gitea.API(context.Background(), w.gitea.Admin.Token, http.MethodGet,
		w.repo.Path("/pulls/"+strconv.Itoa(number)), nil, &p))
	return strconv.FormatBool(p.Mergeable)
}
