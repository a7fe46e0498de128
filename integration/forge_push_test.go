package integration

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/forge/giteatest"
	"github.com/azolla/azolla/workflows"
)

// A branch the forge refuses (a protection rule on azolla/*) is pushed
// once, not again and again, and the run's notes say the push failed;
// the pull request step then says the forge has no such branch, rather
// than a bare 404.
func TestForge_ARefusedPushIsToldByTheRunAndThePullRequestStep(t *testing.T) {
	t.Parallel()
	w := setupForge(t, giteatest.Shared(t), nil)
	ctx := context.Background()
	require.NoError(t, w.gitea.API(ctx, w.gitea.Admin.Token, http.MethodPost, w.repo.Path("/branch_protections"),
		map[string]any{"rule_name": "azolla/*", "enable_push": false}, nil))
	id := uniqueID("refused")
	w.approve(t, id)

	var st workflows.State
	require.Eventually(t, func() bool {
		var err error
		st, err = w.starter.State(ctx, id)
		return err == nil && st.PullRequestError != ""
	}, 2*time.Minute, 100*time.Millisecond, "the pull request step fails")
	require.Equal(t, domain.GatePass, st.GateResult)
	require.Contains(t, st.PullRequestError, "the forge has no branch azolla/"+id)
	b, err := w.store.GetOutputBundle(ctx, w.onlyWorkOrder(t, id).WorkOrderID)
	require.NoError(t, err)
	require.Regexp(t, `Push of azolla/`+id+` to \S+ failed \(1 try\)`, b.Notes, "a refusal is not tried again")
	require.True(t, strings.Contains(b.Notes, "protected") || strings.Contains(b.Notes, "declined"),
		"the notes quote the forge's refusal: %s", b.Notes)
	require.Empty(t, w.pullRequests(t))
}
