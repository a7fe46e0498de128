package integration

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/forge/giteatest"
	"github.com/azolla/azolla/internal/store/sqlstore"
	"github.com/azolla/azolla/internal/store/storetest"
	"github.com/azolla/azolla/workflows"
)

// Four best-of-three objectives on a real Gitea, each ending in a pull
// request, on two workers whose PostgreSQL store, Temporal frontend and
// forge are each reached through a fault proxy (on SQLite, the frontend
// and the forge): every objective awaits
// review on its one pull request (one on the forge, from its own branch,
// and the same one recorded), its workorder has one bundle and one chosen
// candidate of three, and the histories of the claims and of the
// outcomes (bundles, pull requests, chosen candidates) are linearizable.
func TestFaults_BestOfNAndPullRequestsOnAFaultyForge(t *testing.T) {
	t.Parallel()
	s := giteatest.Shared(t)
	forSeeds(t, "best-of-N and pull request", bothBackends, func(t *testing.T, backend string, seed uint64) (int, int, map[string]int) {
		return faultyPullRequests(t, s, backend, seed)
	})
}

// faultyPullRequests is one seed of the scenario: it returns the claim
// operations and outcome writes it checked, and the faults it injected.
func faultyPullRequests(t *testing.T, s *giteatest.Server, backend string, seed uint64) (int, int, map[string]int) {
	w, fw := startFaultyPullRequests(t, s, backend, seed, nil)
	ctx := context.Background()
	numbers := map[int]string{}
	retried := 0 // pushes tried again after a fault
	for _, id := range w.ids {
		st := awaitReview(t, w, id)
		require.Equal(t, domain.GatePass, st.GateResult, "%s: %s", id, st.GateReason)
		wos, bundles, records := w.b.counts(t, id)
		require.Equal(t, []int{1, 1, 1}, []int{wos, bundles, records}, "%s: one workorder, one bundle, one run record", id)
		cands, err := w.direct.ListCandidates(ctx, w.b.onlyWorkOrder(t, id).WorkOrderID)
		require.NoError(t, err)
		require.Len(t, cands, 3, "%s: one record per candidate", id)
		chosen := 0
		for _, c := range cands {
			if c.Chosen {
				chosen++
			}
		}
		require.Equal(t, 1, chosen, "%s: one chosen candidate", id)
		b, err := w.direct.GetOutputBundle(ctx, w.b.onlyWorkOrder(t, id).WorkOrderID)
		require.NoError(t, err)
		if strings.Contains(b.Notes, " tries).") {
			retried++
		}
		pr, err := w.direct.GetPullRequest(ctx, id)
		require.NoError(t, err)
		require.Equal(t, pr.URL, st.PullRequest)
		numbers[pr.Number] = id
	}
	// The forge has one pull request per objective, from its branch: none
	// was opened twice when an answer was lost on the way back.
	prs := fw.pullRequests(t)
	require.Len(t, prs, len(w.ids), "one pull request on the forge per objective, open or closed")
	for _, n := range prs {
		fpr, err := fw.forge.PullRequest(ctx, n)
		require.NoError(t, err)
		require.Equal(t, "azolla/"+numbers[n], fpr.Head, "pull request #%d is the one recorded for its objective", n)
	}
	t.Logf("%d of %d pushes tried again", retried, len(w.ids))
	n, delivered, injected := w.check(t)
	byRule := storetest.OutcomeCounts(w.h)
	require.GreaterOrEqual(t, byRule[storetest.RulePullRequest], len(w.ids), "every pull request was recorded")
	require.GreaterOrEqual(t, byRule[storetest.RuleChosen], len(w.ids), "every workorder's candidate was chosen")
	return n, delivered, injected
}

// awaitReview waits until objective id awaits review, and fails with its
// run's notes if it ends without a pull request instead.
func awaitReview(t *testing.T, w *faultyWorld, id string) workflows.State {
	t.Helper()
	var st workflows.State
	require.Eventually(t, func() bool {
		var err error
		st, err = w.b.starter.State(context.Background(), id)
		return err == nil && (st.Step == workflows.StepAwaitingReview || st.Step == workflows.StepDone)
	}, 3*time.Minute, 50*time.Millisecond, "%s never awaited review", id)
	if st.Step == workflows.StepDone {
		b, err := w.direct.GetOutputBundle(context.Background(), w.b.onlyWorkOrder(t, id).WorkOrderID)
		require.NoError(t, err)
		t.Fatalf("%s ended without a pull request: %s\nits run's notes:\n%s", id, st.PullRequestError, b.Notes)
	}
	return st
}

// startFaultyPullRequests sets up a repository on s whose forge azolla
// reaches through a fault proxy, starts two workers behind faults on a
// store of backend (as goFaulty; mutated first by mutate when set), approves four
// best-of-three objectives on it, and injects faults drawn from seed.
func startFaultyPullRequests(t *testing.T, s *giteatest.Server, backend string, seed uint64,
	mutate func(context.Context, *sqlstore.Store) error) (*faultyWorld, *forgeWorld) {
	u, err := url.Parse(s.URL)
	require.NoError(t, err)
	link := storetest.StartFaultProxy(t, u.Host)
	fw := setupForgeWith(t, s, func(f *config.ForgeConfig) { f.URL = u.Scheme + "://" + link.Addr() }, nil,
		func(o *setupOptions) {
			o.noWorker, o.leaseTTL = true, 3*time.Second
			forge := o.configure
			o.configure = func(c *config.Config) {
				forge(c)
				// Candidates of a second, so the faults fall on them.
				c.Patch.Command.Run = "sleep 1; " + taskAgent
			}
		})
	w := goFaulty(t, fw.bundle, backend, mutate)
	fw.startWorker(t, "first")
	fw.startWorker(t, "second")
	w.links = append(w.links, faultyLink{"forge", link, 200 * time.Millisecond})
	w.ids = fw.approveAll(t, "prfault", 4, bestOfN(fw.clone, 3), func(o *domain.Objective) {
		o.AcceptanceCriteria = []string{"task.txt says what to do"}
	})
	w.inject(t, seed)
	return w, fw
}

// The pull request scenario sees what it is meant to: with the claim
// acquisition's expiry guard removed, the workers' history is not
// linearizable.
func TestMutation_PullRequestsCatchABrokenGuard(t *testing.T) {
	t.Parallel()
	w, _ := startFaultyPullRequests(t, giteatest.Shared(t), "postgres", 1, storetest.RemoveExpiryGuard)
	requireCaught(t, w.h)
}
