package cli

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/pause"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/storetest"
)

// passedOn writes objective id, on repository repo, through a PASS of
// commit storetest.SHA1 at at, to DONE with its RUN_COMPLETE pause.
func passedOn(t *testing.T, s store.Store, id, repo string, at time.Time) *store.WorkOrder {
	t.Helper()
	ctx := context.Background()
	o := storetest.Objective(id)
	o.Repository, o.BaseBranch = repo, "main"
	require.NoError(t, s.CreateObjective(ctx, o))
	ev, _, err := s.EmitEvent(ctx, storetest.Event("ev-"+id, id, 1, at))
	require.NoError(t, err)
	require.NoError(t, s.CreateContextSnapshot(ctx, &store.ContextSnapshot{ContextSnapshotID: "cs-" + id, ObjectiveID: id,
		FullPromptText: "Fix it", Metadata: store.SnapshotMetadata{BaseBranch: "main"}, CreatedAt: at}))
	wo := &store.WorkOrder{WorkOrderID: "wo-" + id, EventID: ev.EventID, ObjectiveID: id, DiazotrophType: "PATCH_DIAZOTROPH",
		ContextSnapshotID: "cs-" + id, BranchName: "azolla/" + id, BudgetMS: 60000, Status: store.WorkOrderCreated, CreatedAt: at}
	for _, to := range []store.Status{store.StatusTodo, store.StatusInProgress} {
		_, err := s.TransitionObjective(ctx, store.TransitionObjectiveParams{ObjectiveID: id, To: to, Now: at})
		require.NoError(t, err)
	}
	_, _, err = s.CreateWorkOrder(ctx, wo)
	require.NoError(t, err)
	_, _, err = s.CreateOutputBundle(ctx, &store.OutputBundle{WorkOrderID: wo.WorkOrderID, Title: "Fix",
		Content: "diff --git a/x b/x\n", RunnerStatus: store.RunnerOK, CreatedAt: at})
	require.NoError(t, err)
	_, _, err = s.MarkWorkOrderExecuted(ctx, store.MarkWorkOrderExecutedParams{WorkOrderID: wo.WorkOrderID, Now: at})
	require.NoError(t, err)
	_, err = s.UpsertRunRecord(ctx, &store.RunRecord{WorkOrderID: wo.WorkOrderID, ObjectiveID: id,
		GateResult: store.GatePass, GateReason: "checked", CommitSHA: storetest.SHA1, CreatedAt: at, UpdatedAt: at})
	require.NoError(t, err)
	done, err := s.TransitionObjective(ctx, store.TransitionObjectiveParams{ObjectiveID: id, To: store.StatusDone, Now: at})
	require.NoError(t, err)
	ps := pause.RunComplete(id, done.StatusSeq, wo.WorkOrderID, wo.BranchName, nil, at)
	require.NoError(t, s.CreatePauseState(ctx, &ps))
	return wo
}

// The inbox lists an open pull request waiting for review with its
// commands, one closed without merge, and a recent PASS on a repository
// with a forge whose pull request is not open yet; a PASS elsewhere, an
// old one, and a merged pull request wait for nothing.
func TestInbox_PullRequests(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	env = offline(t, env)
	require.NoError(t, os.WriteFile(filepath.Join(env["AZOLLA_DATA_DIR"], "azolla.yaml"), []byte(`patch:
  repositories:
    - repository: /srv/app
      forge: {kind: gitea, url: "https://gitea.example.com", repository: team/app, token_env: APP_TOKEN}
`), 0o600))
	ctx, now := context.Background(), time.Now().UTC()

	open := passedOn(t, s, "pr-open", "/srv/app", now.Add(-time.Hour))
	_, _, err := s.RecordPullRequest(ctx, storetest.PullRequestParams(open, 7, now.Add(-time.Hour)))
	require.NoError(t, err)
	merged := passedOn(t, s, "pr-merged", "/srv/app", now.Add(-time.Hour))
	_, _, err = s.RecordPullRequest(ctx, storetest.PullRequestParams(merged, 8, now.Add(-time.Hour)))
	require.NoError(t, err)
	_, _, err = s.UpdatePullRequestState(ctx, store.UpdatePullRequestStateParams{ObjectiveID: "pr-merged",
		State: store.PullRequestMerged, Now: now})
	require.NoError(t, err)
	closed := passedOn(t, s, "pr-closed", "/srv/app", now.Add(-time.Hour))
	_, _, err = s.RecordPullRequest(ctx, storetest.PullRequestParams(closed, 9, now.Add(-time.Hour)))
	require.NoError(t, err)
	_, _, err = s.UpdatePullRequestState(ctx, store.UpdatePullRequestStateParams{ObjectiveID: "pr-closed",
		State: store.PullRequestClosed, Now: now})
	require.NoError(t, err)
	o, err := s.GetObjective(ctx, "pr-closed")
	require.NoError(t, err)
	ps := pause.PullRequestClosed("pr-closed", o.StatusSeq, closed.WorkOrderID, "https://gitea.example.com/team/app/pulls/9", now)
	require.NoError(t, s.CreatePauseState(ctx, &ps))
	passedOn(t, s, "pr-pending", "/srv/app", now.Add(-time.Hour))
	passedOn(t, s, "pr-stale", "/srv/app", now.Add(-48*time.Hour))
	passedOn(t, s, "no-forge", "/srv/other", now.Add(-time.Hour))

	byID := map[string]inboxItem{}
	for _, it := range inboxJSON(t, env) {
		byID[it.SubjectID] = it
	}
	require.Len(t, byID, 3, "%v", byID)
	require.Equal(t, inboxPR, byID["pr-open"].Kind)
	require.Equal(t, "review https://git.example.org/azolla/azolla/pulls/7", byID["pr-open"].Reason)
	require.Equal(t, []inboxAction{
		{Text: "review pull request #7 (round 1)", Command: "https://git.example.org/azolla/azolla/pulls/7"},
		{Text: "ask for another round with its review", Command: `azolla objective retry pr-open --comment "what to change"`},
		{Text: "read it now rather than at the next poll", Command: "azolla pr sync pr-open"},
	}, byID["pr-open"].Actions)
	require.Equal(t, store.PausePullRequestClosed, byID["pr-closed"].Reason)
	require.Equal(t, "pull request pending", byID["pr-pending"].Reason)
	require.Equal(t, "azolla objective show pr-pending", byID["pr-pending"].Actions[0].Command)
}
