package cli

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/storetest"
)

// chosenWhyText is why withCandidates' winner won.
const chosenWhyText = "passed every gate command (2 of 2), the smallest diff"

// withCandidates writes objective id through a best-of-3 run: candidate 1
// passed both gate commands and was chosen, candidate 2 failed `go test`,
// candidate 3 was cancelled before it reported anything. The bundle carries
// the winner's report again.
func withCandidates(t *testing.T, s store.Store, id string) *domain.WorkOrder {
	t.Helper()
	ctx := context.Background()
	wo := executed(t, s, id, domain.OutputBundle{Title: "Patch for " + id, Content: "diff --git a/f b/f\n",
		RunnerStatus: domain.RunnerOK, Metadata: domain.BundleMetadata{Generator: "command",
			RunReport: &domain.RunReport{Model: "m", CostUSD: dollars(0.25)}}})
	for _, c := range []*domain.Candidate{storetest.Candidate(wo.WorkOrderID, 1, 2), storetest.Candidate(wo.WorkOrderID, 2, 1),
		{WorkOrderID: wo.WorkOrderID, Attempt: 3, Generator: "command", Status: domain.CandidateCancelled,
			CreatedAt: storetest.T0, UpdatedAt: storetest.T0}} {
		_, err := s.PutCandidate(ctx, c)
		require.NoError(t, err)
	}
	_, err := s.ChooseCandidate(ctx, store.ChooseCandidateParams{WorkOrderID: wo.WorkOrderID, Attempt: 1,
		Why: chosenWhyText, Now: executedAt})
	require.NoError(t, err)
	return wo
}

func TestObjectiveCandidates_ListsEachCandidateWithItsEvidence(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	withCandidates(t, s, "obj-n")

	res := azolla(t, env, "objective", "candidates", "obj-n")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "workorder wo-obj-n\n"+
		"  #1  DONE  runner OK  gates 2/2 passed  2 diff lines  $0.25  CHOSEN\n"+
		"      chosen  "+chosenWhyText+"\n"+
		"  #2  DONE  runner OK  gates 1/2 passed  4 diff lines  $0.25\n"+
		"      failed  go test ./...: exit 1: --- FAIL: TestX\n"+
		"  #3  CANCELLED  no gate results  cost unknown\n", res.stdout)

	res = azolla(t, env, "objective", "candidates", "obj-n", "-o", "json")
	require.Equal(t, 0, res.code, res.stderr)
	var got []*domain.Candidate
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &got))
	want, err := s.ListCandidates(t.Context(), "wo-obj-n")
	require.NoError(t, err)
	require.Equal(t, want, got, "the JSON form is the stored records")
}

// Candidates of several workorders come by workorder, then attempt.
func TestObjectiveCandidates_OrdersByWorkOrderThenAttempt(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	ctx := context.Background()
	first := withCandidates(t, s, "obj-n")
	ev, _, err := s.EmitEvent(ctx, storetest.Event("ev-obj-n-2", "obj-n", 2, executedAt))
	require.NoError(t, err)
	second := *first
	second.WorkOrderID, second.EventID, second.CreatedAt = "wo-obj-n-2", ev.EventID, executedAt
	_, _, err = s.CreateWorkOrder(ctx, &second)
	require.NoError(t, err)
	for _, attempt := range []int{2, 1} {
		_, err := s.PutCandidate(ctx, storetest.Candidate(second.WorkOrderID, attempt, 2))
		require.NoError(t, err)
	}

	res := azolla(t, env, "objective", "candidates", "obj-n", "-o", "json")
	require.Equal(t, 0, res.code, res.stderr)
	var got []*domain.Candidate
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &got))
	var keys []string
	for _, c := range got {
		keys = append(keys, domain.CandidateKey(c.WorkOrderID, c.Attempt))
	}
	require.Equal(t, []string{"wo-obj-n#1", "wo-obj-n#2", "wo-obj-n#3", "wo-obj-n-2#1", "wo-obj-n-2#2"}, keys)

	res = azolla(t, env, "objective", "candidates", "obj-n")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "  #3  CANCELLED  no gate results  cost unknown\nworkorder wo-obj-n-2\n  #1  DONE")
}

func TestObjectiveCandidates_NoneSaysSoAndAnUnknownIDExits3(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	passedObjective(t, s, "single")

	res := azolla(t, env, "objective", "candidates", "single")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "objective single has no candidates: its runs made one patch each (attempts 1)\n", res.stdout)
	res = azolla(t, env, "objective", "candidates", "single", "-o", "json")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "[]\n", res.stdout)

	res = azolla(t, env, "objective", "candidates", "nope")
	require.Equal(t, 3, res.code, res.stderr)
	require.Contains(t, res.stderr, "nope")
	require.Empty(t, res.stdout)
}

// Candidate rows written past the schema still print on safe lines.
func TestObjectiveCandidates_RendersHostileRowsVisibly(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	env = offline(t, env)
	withCandidates(t, s, "obj-n")
	gates, err := json.Marshal([]domain.CandidateGateResult{{Command: "make " + hostile, Detail: "exit 2\n" + hostile}})
	require.NoError(t, err)
	rawSQL(t, env, "UPDATE candidates SET why = ?, runner_status = ? WHERE attempt = 1", "won "+hostile, "OK"+hostile)
	rawSQL(t, env, "UPDATE candidates SET gate_results = ? WHERE attempt = 2", string(gates))

	for _, args := range [][]string{{"objective", "candidates", "obj-n"}, {"objective", "show", "obj-n"}} {
		res := azolla(t, env, args...)
		require.Equal(t, 0, res.code, res.stderr)
		requireNoRawControls(t, res.stdout)
		require.Contains(t, res.stdout, "runner OK"+escapedHostile+"  gates 2/2")
		require.Contains(t, res.stdout, "won "+escapedHostile)
	}
	res := azolla(t, env, "objective", "candidates", "obj-n")
	require.Contains(t, res.stdout, "      failed  make "+escapedHostile+": exit 2\n")
}

func TestObjectiveShow_ExplainsTheCandidatesAndTheChoice(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	env = offline(t, env)
	withCandidates(t, s, "obj-n")

	res := azolla(t, env, "objective", "show", "obj-n")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "\n"+
		"  candidate #1  DONE  runner OK  gates 2/2 passed  2 diff lines  $0.25  CHOSEN\n"+
		"  candidate #2  DONE  runner OK  gates 1/2 passed (failed: go test ./...)  4 diff lines  $0.25\n"+
		"  candidate #3  CANCELLED  no gate results  cost unknown\n"+
		"  chosen    #1: "+chosenWhyText+"\n")
	require.Contains(t, res.stdout, "spent       $0.50 over 3 runs (1 of unknown cost)\n",
		"the candidates count, not the bundle repeating the winner's report")

	res = azolla(t, env, "objective", "show", "obj-n", "-o", "json")
	require.Equal(t, 0, res.code, res.stderr)
	var d objectiveDetail
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &d))
	require.Len(t, d.WorkOrders, 1)
	want, err := s.ListCandidates(t.Context(), "wo-obj-n")
	require.NoError(t, err)
	require.Equal(t, want, d.WorkOrders[0].Candidates)
	spend, err := s.ObjectiveSpend(t.Context(), "obj-n")
	require.NoError(t, err)
	require.Equal(t, spend, d.Spend, "show counts spend as the store does")
}

func TestObjectiveShow_WithoutCandidatesPrintsNoneAndAnEmptyList(t *testing.T) {
	t.Parallel()
	s, env := migratedStore(t)
	env = offline(t, env)
	passedObjective(t, s, "single")

	res := azolla(t, env, "objective", "show", "single")
	require.Equal(t, 0, res.code, res.stderr)
	require.NotContains(t, res.stdout, "candidate")
	require.NotContains(t, res.stdout, "chosen")
	res = azolla(t, env, "objective", "show", "single", "-o", "json")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, `"candidates": []`)
}

func TestObjectiveCreate_AttemptsFromTheFlagOrTheRepositoryDefault(t *testing.T) {
	t.Parallel()
	env := offlineEnv(t)
	repo := t.TempDir()
	require.NoError(t, exec.Command("git", "init", "-q", repo).Run())
	cfg := writeFile(t, t.TempDir(), "azolla.yaml", "patch:\n  repositories:\n    - repository: "+repo+"\n      attempts: 4\n")
	intp := func(n int) *int { return &n }
	cases := []struct {
		id   string
		args []string
		want *int
	}{
		{"three", []string{"--attempts", "3"}, intp(3)},
		{"one", []string{"--attempts", "1"}, nil},
		{"none", nil, nil},
		{"repo-default", []string{"--repository", repo}, intp(4)},
		{"repo-flag-wins", []string{"--repository", repo, "--attempts", "2"}, intp(2)},
		{"repo-one-wins", []string{"--repository", repo, "--attempts", "1"}, nil},
	}
	for _, tc := range cases {
		args := append([]string{"--config", cfg, "objective", "create", "--title", tc.id, "--id", tc.id, "-o", "json"}, tc.args...)
		res := azolla(t, env, args...)
		require.Equal(t, 0, res.code, "%s: %s", tc.id, res.stderr)
		var o domain.Objective
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &o))
		require.Equal(t, tc.want, o.Attempts, tc.id)
	}
	stored := map[string]*int{}
	for _, o := range listObjectives(t, env) {
		stored[o.ObjectiveID] = o.Attempts
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, stored[tc.id], "%s as stored", tc.id)
	}

	res := azolla(t, env, "--config", cfg, "objective", "create", "--file", "-", "--attempts", "3")
	require.Equal(t, 2, res.code, res.stderr)
	require.Contains(t, res.stderr, "--attempts cannot be combined with --file")
}

func TestObjectiveCreate_BadAttemptsStoreNothing(t *testing.T) {
	t.Parallel()
	env := offlineEnv(t)
	for _, bad := range []string{"0", "21", "-1", "abc", "2.5"} {
		res := azolla(t, env, "objective", "create", "--title", "Bad", "--id", "bad", "--attempts", bad)
		require.Equal(t, 2, res.code, "--attempts %s: %s", bad, res.stderr)
		require.Contains(t, res.stderr, "attempts", bad)
	}
	require.Empty(t, listObjectives(t, env), "nothing stored for bad attempts")
}

// A candidate's cost is counted as the objective's spend counts it.
func TestCandidateCost_CountsAsTheSpendDoes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		c    domain.Candidate
		want string
	}{
		{"reported", domain.Candidate{Generator: "command", Status: domain.CandidateDone,
			Report: &domain.RunReport{CostUSD: dollars(1.5)}}, "$1.50"},
		{"no report from an agent", domain.Candidate{Generator: "command", Status: domain.CandidateFailed}, "cost unknown"},
		{"a report without cost", domain.Candidate{Generator: "openai", Status: domain.CandidateCancelled,
			Report: &domain.RunReport{Turns: 2}}, "cost unknown"},
		{"the static generator", domain.Candidate{Generator: "static", Status: domain.CandidateDone}, "no cost"},
		{"never started", domain.Candidate{Generator: "command", Status: domain.CandidateSkipped,
			Report: &domain.RunReport{CostUSD: dollars(1)}}, "not run"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, candidateCost(&tc.c))
		})
	}
}
