package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

func exerciseSpend(t *testing.T, open func(t testing.TB) store.Store) {
	t.Run("Budget_StoredSetAndRefusedWhenInvalid", func(t *testing.T) { testBudgets(t, open(t)) })
	t.Run("Spend_SumsTheObjectivesRunReports", func(t *testing.T) { testSpend(t, open(t)) })
	t.Run("Spend_CountsCandidatesInsteadOfTheirBundle", func(t *testing.T) { testCandidateSpend(t, open(t)) })
}

func usd(v float64) *float64 { return &v }

func testBudgets(t *testing.T, s store.Store) {
	ctx := context.Background()
	o := Objective("obj-b")
	o.BudgetUSD = usd(4)
	wo := ScheduledObjective(t, s, o, T0)
	wo.BudgetUSDRemaining = usd(2.5)
	_, _, err := s.CreateWorkOrder(ctx, wo)
	require.NoError(t, err)
	got, err := s.GetObjective(ctx, "obj-b")
	require.NoError(t, err)
	require.Equal(t, usd(4), got.BudgetUSD)
	w, err := s.GetWorkOrder(ctx, wo.WorkOrderID)
	require.NoError(t, err)
	require.Equal(t, usd(2.5), w.BudgetUSDRemaining)

	for _, bad := range []float64{0, -1} {
		neg := Objective("obj-bad")
		neg.BudgetUSD = usd(bad)
		requireViolation(t, s.CreateObjective(ctx, neg), "/budget_usd")
		_, err = s.SetObjectiveBudget(ctx, store.SetObjectiveBudgetParams{ObjectiveID: "obj-b", BudgetUSD: usd(bad)})
		requireViolation(t, err, "/budget_usd")
	}
	_, err = s.GetObjective(ctx, "obj-bad")
	require.ErrorIs(t, err, domain.ErrNotFound)
	got, err = s.GetObjective(ctx, "obj-b")
	require.NoError(t, err)
	require.Equal(t, usd(4), got.BudgetUSD, "a refused budget changes nothing")

	set, err := s.SetObjectiveBudget(ctx, store.SetObjectiveBudgetParams{ObjectiveID: "obj-b", BudgetUSD: usd(9.5), Now: T0.Add(9 * time.Second)})
	require.NoError(t, err)
	require.Equal(t, usd(9.5), set.BudgetUSD)
	got, err = s.GetObjective(ctx, "obj-b")
	require.NoError(t, err)
	require.Equal(t, set, got)
	require.Equal(t, T0.Add(9*time.Second), got.UpdatedAt)

	_, err = s.SetObjectiveBudget(ctx, store.SetObjectiveBudgetParams{ObjectiveID: "obj-b"})
	require.NoError(t, err)
	got, err = s.GetObjective(ctx, "obj-b")
	require.NoError(t, err)
	require.Nil(t, got.BudgetUSD, "nil clears the cap")

	_, err = s.SetObjectiveBudget(ctx, store.SetObjectiveBudgetParams{ObjectiveID: "nope", BudgetUSD: usd(1)})
	var nf *domain.NotFoundError
	require.True(t, errors.As(err, &nf), "got %v", err)
}

func testSpend(t *testing.T, s store.Store) {
	ctx := context.Background()
	spend, err := s.ObjectiveSpend(ctx, "obj-s")
	require.NoError(t, err)
	require.Equal(t, domain.Spend{}, spend, "nothing run, nothing spent")

	bundle := func(o *domain.Objective, seq int64, m domain.BundleMetadata) {
		t.Helper()
		id := o.ObjectiveID
		var wo *domain.WorkOrder
		if seq == 1 {
			wo = ScheduledObjective(t, s, o, T0)
		} else { // a later round of the objective
			ev, _, err := s.EmitEvent(ctx, Event(fmt.Sprintf("ev-%s-%d", id, seq), id, seq, T0))
			require.NoError(t, err)
			wo = &domain.WorkOrder{WorkOrderID: fmt.Sprintf("wo-%s-%d", id, seq), EventID: ev.EventID, ObjectiveID: id,
				DiazotrophType: "PATCH_DIAZOTROPH", ContextSnapshotID: "cs-" + id, BranchName: "azolla/" + id,
				BudgetMS: 60000, Status: domain.WorkOrderCreated, CreatedAt: T0}
		}
		_, _, err := s.CreateWorkOrder(ctx, wo)
		require.NoError(t, err)
		_, _, err = s.CreateOutputBundle(ctx, &domain.OutputBundle{WorkOrderID: wo.WorkOrderID, Title: "Fix", Content: "x",
			Metadata: m, RunnerStatus: domain.RunnerOK, CreatedAt: T0})
		require.NoError(t, err)
	}
	o := Objective("obj-s")
	bundle(o, 1, domain.BundleMetadata{Generator: "command", RunReport: &domain.RunReport{Model: "m", CostUSD: usd(1.25),
		Tokens: &domain.Tokens{Input: 100, Output: 20, CacheRead: 5}}})
	bundle(o, 2, domain.BundleMetadata{Generator: "command"})
	bundle(o, 3, domain.BundleMetadata{Generator: "openai", RunReport: &domain.RunReport{Model: "m", CostUSD: usd(0.5),
		Tokens: &domain.Tokens{Input: 1, Output: 2, CacheWrite: 3}}})
	bundle(o, 4, domain.BundleMetadata{Generator: "static"})
	bundle(Objective("obj-other"), 1, domain.BundleMetadata{Generator: "command",
		RunReport: &domain.RunReport{CostUSD: usd(100)}})

	spend, err = s.ObjectiveSpend(ctx, "obj-s")
	require.NoError(t, err)
	require.Equal(t, domain.Spend{USD: 1.75, Runs: 3, Unknown: 1,
		Tokens: domain.Tokens{Input: 101, Output: 22, CacheRead: 5, CacheWrite: 3}}, spend,
		"the static run costs nothing; the command run without a report is of unknown cost; another objective's run is not counted")
	require.Equal(t, "$1.75 over 3 runs (1 of unknown cost)", spend.String())
}

// testCandidateSpend: a workorder with candidates counts each candidate's
// run, and not its bundle, which carries the winner's report again.
func testCandidateSpend(t *testing.T, s store.Store) {
	ctx := context.Background()
	o := Objective("obj-n")
	wo := ScheduledObjective(t, s, o, T0)
	_, _, err := s.CreateWorkOrder(ctx, wo)
	require.NoError(t, err)
	put := func(attempt int, generator, status string, r *domain.RunReport) {
		t.Helper()
		c := Candidate(wo.WorkOrderID, attempt, 2)
		c.Generator, c.Status, c.Report = generator, status, r
		_, err := s.PutCandidate(ctx, c)
		require.NoError(t, err)
	}
	put(1, "command", domain.CandidateDone, &domain.RunReport{CostUSD: usd(0.5), Tokens: &domain.Tokens{Input: 7}})
	put(2, "openai", domain.CandidateCancelled, &domain.RunReport{CostUSD: usd(0.25)})
	put(3, "command", domain.CandidateRunning, nil)
	put(4, "static", domain.CandidateDone, nil)
	put(5, "command", domain.CandidateSkipped, nil)

	spend, err := s.ObjectiveSpend(ctx, "obj-n")
	require.NoError(t, err)
	want := domain.Spend{USD: 0.75, Runs: 3, Unknown: 1, Tokens: domain.Tokens{Input: 7}}
	require.Equal(t, want, spend, "a running candidate without a report is of unknown cost; static and skipped ones cost nothing")

	_, err = s.ChooseCandidate(ctx, store.ChooseCandidateParams{WorkOrderID: wo.WorkOrderID, Attempt: 1, Why: "passed"})
	require.NoError(t, err)
	_, _, err = s.CreateOutputBundle(ctx, &domain.OutputBundle{WorkOrderID: wo.WorkOrderID, Title: "Fix", Content: "x",
		Metadata: domain.BundleMetadata{Generator: "command", RunReport: &domain.RunReport{CostUSD: usd(0.5),
			Tokens: &domain.Tokens{Input: 7}}}, RunnerStatus: domain.RunnerOK, CreatedAt: T0})
	require.NoError(t, err)
	spend, err = s.ObjectiveSpend(ctx, "obj-n")
	require.NoError(t, err)
	require.Equal(t, want, spend, "the bundle repeats the winner's report; it does not count twice")

	// A later round without candidates counts by its bundle, as before.
	ev, _, err := s.EmitEvent(ctx, Event("ev-obj-n-2", "obj-n", 2, T0))
	require.NoError(t, err)
	second := *wo
	second.WorkOrderID, second.EventID = "wo-obj-n-2", ev.EventID
	_, _, err = s.CreateWorkOrder(ctx, &second)
	require.NoError(t, err)
	_, _, err = s.CreateOutputBundle(ctx, &domain.OutputBundle{WorkOrderID: second.WorkOrderID, Title: "Fix", Content: "x",
		Metadata:     domain.BundleMetadata{Generator: "openai", RunReport: &domain.RunReport{CostUSD: usd(2)}},
		RunnerStatus: domain.RunnerOK, CreatedAt: T0})
	require.NoError(t, err)
	spend, err = s.ObjectiveSpend(ctx, "obj-n")
	require.NoError(t, err)
	require.Equal(t, domain.Spend{USD: 2.75, Runs: 4, Unknown: 1, Tokens: domain.Tokens{Input: 7}}, spend)
}
