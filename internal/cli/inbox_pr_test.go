package cli

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/inbox"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/storetest"
)

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

	open := storetest.PassedOn(t, s, "pr-open", "/srv/app", now.Add(-time.Hour))
	_, _, err := s.RecordPullRequest(ctx, storetest.PullRequestParams(open, 7, now.Add(-time.Hour)))
	require.NoError(t, err)
	merged := storetest.PassedOn(t, s, "pr-merged", "/srv/app", now.Add(-time.Hour))
	_, _, err = s.RecordPullRequest(ctx, storetest.PullRequestParams(merged, 8, now.Add(-time.Hour)))
	require.NoError(t, err)
	_, _, err = s.UpdatePullRequestState(ctx, store.UpdatePullRequestStateParams{ObjectiveID: "pr-merged",
		State: domain.PullRequestMerged, Now: now})
	require.NoError(t, err)
	closed := storetest.PassedOn(t, s, "pr-closed", "/srv/app", now.Add(-time.Hour))
	_, _, err = s.RecordPullRequest(ctx, storetest.PullRequestParams(closed, 9, now.Add(-time.Hour)))
	require.NoError(t, err)
	_, _, err = s.UpdatePullRequestState(ctx, store.UpdatePullRequestStateParams{ObjectiveID: "pr-closed",
		State: domain.PullRequestClosed, Now: now})
	require.NoError(t, err)
	o, err := s.GetObjective(ctx, "pr-closed")
	require.NoError(t, err)
	ps := pause.PullRequestClosed("pr-closed", o.StatusSeq, closed.WorkOrderID, "https://gitea.example.com/team/app/pulls/9", now)
	require.NoError(t, s.CreatePauseState(ctx, &ps))
	storetest.PassedOn(t, s, "pr-pending", "/srv/app", now.Add(-time.Hour))
	storetest.PassedOn(t, s, "pr-stale", "/srv/app", now.Add(-48*time.Hour))
	storetest.PassedOn(t, s, "no-forge", "/srv/other", now.Add(-time.Hour))

	byID := map[string]inbox.Item{}
	for _, it := range inboxJSON(t, env) {
		byID[it.SubjectID] = it
	}
	require.Len(t, byID, 3, "%v", byID)
	require.Equal(t, inbox.KindPullRequest, byID["pr-open"].Kind)
	require.Equal(t, "review https://git.example.org/azolla/azolla/pulls/7", byID["pr-open"].Reason)
	require.Equal(t, []inbox.Action{
		{Text: "review pull request #7 (round 1)", Command: "https://git.example.org/azolla/azolla/pulls/7"},
		{Text: "ask for another round with its review", Command: `azolla objective retry pr-open --comment "what to change"`},
		{Text: "read it now rather than at the next poll", Command: "azolla pr sync pr-open"},
	}, byID["pr-open"].Actions)
	require.Equal(t, domain.PausePullRequestClosed, byID["pr-closed"].Reason)
	require.Equal(t, "pull request pending", byID["pr-pending"].Reason)
	require.Equal(t, "azolla objective show pr-pending", byID["pr-pending"].Actions[0].Command)
}
