package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

func exerciseCandidates(t *testing.T, open func(t testing.TB) store.Store) {
	t.Run("Candidate_PutReplaceListChooseOnce", func(t *testing.T) { testCandidates(t, open(t)) })
	t.Run("Candidate_InvalidRefusedNamingFieldAndNothingWritten", func(t *testing.T) { testInvalidCandidates(t, open(t)) })
	t.Run("Candidate_ConcurrentChoicesOneWins", func(t *testing.T) { testConcurrentChoice(t, open(t)) })
	t.Run("Candidate_HowItEndedIsNotRewritten", func(t *testing.T) { testCandidateFinished(t, open(t)) })
	t.Run("Objective_AttemptsStoredAndBounded", func(t *testing.T) { testObjectiveAttempts(t, open(t)) })
}

// CandidateWorkOrder stores a scheduled objective's workorder for
// candidates to hang on.
func CandidateWorkOrder(t testing.TB, s store.Querier, objectiveID string) *domain.WorkOrder {
	t.Helper()
	wo, _, err := s.CreateWorkOrder(context.Background(), Scheduled(t, s, objectiveID))
	require.NoError(t, err)
	return wo
}

// Candidate returns a valid DONE candidate of workOrderID that passed
// passed of two gate commands.
func Candidate(workOrderID string, attempt, passed int) *domain.Candidate {
	lines := 2 * attempt
	done := T0.Add(time.Duration(attempt) * time.Minute)
	gates := []domain.CandidateGateResult{
		{Command: "go build ./...", Passed: passed >= 1, Detail: "exit 0"},
		{Command: "go test ./...", Passed: passed >= 2, Detail: "exit 1: --- FAIL: TestX"},
	}
	return &domain.Candidate{WorkOrderID: workOrderID, Attempt: attempt, Generator: "command",
		Status: domain.CandidateDone, RunnerStatus: domain.RunnerOK,
		Patch:     fmt.Sprintf("diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-x\n+y%d\n", attempt),
		DiffLines: &lines, GateResults: gates, CommandsPassed: passed,
		Report:     &domain.RunReport{Model: "m", CostUSD: usd(0.25), Tokens: &domain.Tokens{Input: 10, Output: 2}},
		FinishedAt: &done, CreatedAt: T0, UpdatedAt: done}
}

func testCandidates(t *testing.T, s store.Store) {
	ctx := context.Background()
	wo := CandidateWorkOrder(t, s, "obj-c")
	id := wo.WorkOrderID

	running := &domain.Candidate{WorkOrderID: id, Attempt: 2, Generator: "command", Status: domain.CandidateRunning,
		CreatedAt: T0, UpdatedAt: T0}
	stored, err := s.PutCandidate(ctx, running)
	require.NoError(t, err)
	require.Equal(t, []domain.CandidateGateResult{}, stored.GateResults, "no gate results read back as an empty list")
	first := Candidate(id, 1, 2)
	one, err := s.PutCandidate(ctx, first)
	require.NoError(t, err)
	require.Equal(t, domain.PatchSHA256(first.Patch), one.PatchSHA256, "the patch's hash is filled in")
	got, err := s.GetCandidate(ctx, id, 1)
	require.NoError(t, err)
	require.Equal(t, one, got)

	// The running candidate finishes: its record is replaced, created_at kept.
	finished := Candidate(id, 2, 1)
	finished.CreatedAt = T0.Add(time.Hour)
	two, err := s.PutCandidate(ctx, finished)
	require.NoError(t, err)
	require.Equal(t, T0, two.CreatedAt, "a replaced candidate keeps its created_at")
	require.Equal(t, domain.CandidateDone, two.Status)
	list, err := s.ListCandidates(ctx, id)
	require.NoError(t, err)
	require.Equal(t, []*domain.Candidate{one, two}, list, "by attempt, the replacement in place")

	_, err = s.GetCandidate(ctx, id, 7)
	var nf *domain.NotFoundError
	require.ErrorAs(t, err, &nf)
	_, err = s.PutCandidate(ctx, Candidate("wo-nope", 1, 0))
	require.ErrorAs(t, err, &nf, "an unknown workorder")
	_, err = s.ChooseCandidate(ctx, store.ChooseCandidateParams{WorkOrderID: id, Attempt: 7})
	require.ErrorAs(t, err, &nf, "an unknown candidate")

	_, err = s.PutCandidate(ctx, &domain.Candidate{WorkOrderID: id, Attempt: 3, Generator: "openai",
		Status: domain.CandidateRunning, CreatedAt: T0, UpdatedAt: T0})
	require.NoError(t, err)
	_, err = s.ChooseCandidate(ctx, store.ChooseCandidateParams{WorkOrderID: id, Attempt: 3, Why: "too early"})
	requireViolation(t, err, "/status")

	chosen, err := s.ChooseCandidate(ctx, store.ChooseCandidateParams{WorkOrderID: id, Attempt: 1,
		Why: "passed 2 of 2 gate commands", Now: T0.Add(time.Hour)})
	require.NoError(t, err)
	require.True(t, chosen.Chosen)
	require.Equal(t, "passed 2 of 2 gate commands", chosen.Why)
	require.Equal(t, T0.Add(time.Hour), chosen.UpdatedAt)
	got, err = s.GetCandidate(ctx, id, 1)
	require.NoError(t, err)
	require.Equal(t, chosen, got)

	again, err := s.ChooseCandidate(ctx, store.ChooseCandidateParams{WorkOrderID: id, Attempt: 1,
		Why: "a second opinion", Now: T0.Add(2 * time.Hour)})
	require.NoError(t, err, "choosing the chosen one again is a no-op")
	require.Equal(t, chosen, again)

	before, err := s.ListCandidates(ctx, id)
	require.NoError(t, err)
	_, err = s.ChooseCandidate(ctx, store.ChooseCandidateParams{WorkOrderID: id, Attempt: 2})
	require.ErrorIs(t, err, domain.ErrCandidatesSettled)
	_, err = s.PutCandidate(ctx, Candidate(id, 2, 2))
	require.ErrorIs(t, err, domain.ErrCandidatesSettled, "a settled candidate is not replaced")
	_, err = s.PutCandidate(ctx, Candidate(id, 4, 2))
	require.ErrorIs(t, err, domain.ErrCandidatesSettled, "a settled workorder takes no new candidate")
	after, err := s.ListCandidates(ctx, id)
	require.NoError(t, err)
	require.Equal(t, before, after, "refused writes change nothing")

	// Another workorder's candidates are not settled by this one's choice.
	other := CandidateWorkOrder(t, s, "obj-c2")
	_, err = s.PutCandidate(ctx, Candidate(other.WorkOrderID, 1, 2))
	require.NoError(t, err)
	none, err := s.ListCandidates(ctx, "wo-nope")
	require.NoError(t, err)
	require.Empty(t, none)
}

func testInvalidCandidates(t *testing.T, s store.Store) {
	ctx := context.Background()
	wo := CandidateWorkOrder(t, s, "obj-c")
	id := wo.WorkOrderID
	for _, tc := range []struct {
		name    string
		pointer string
		mutate  func(c *domain.Candidate)
	}{
		{"hostile workorder id", "/work_order_id", func(c *domain.Candidate) { c.WorkOrderID = "../" + id }},
		{"attempt zero", "/attempt", func(c *domain.Candidate) { c.Attempt = 0 }},
		{"attempt past the bound", "/attempt", func(c *domain.Candidate) { c.Attempt = domain.MaxAttempts + 1 }},
		{"unknown generator", "/generator", func(c *domain.Candidate) { c.Generator = "oracle" }},
		{"unknown status", "/status", func(c *domain.Candidate) { c.Status = "WON" }},
		{"control in a gate detail", "/gate_results/1/detail", func(c *domain.Candidate) { c.GateResults[1].Detail = "x\x1b[2J" }},
		{"empty gate command", "/gate_results/0/command", func(c *domain.Candidate) { c.GateResults[0].Command = "" }},
		{"why on two lines", "/why", func(c *domain.Candidate) { c.Why = "won\nreally" }},
		{"negative diff size", "/diff_lines", func(c *domain.Candidate) { n := -1; c.DiffLines = &n }},
		{"patch past 4 MiB", "/patch", func(c *domain.Candidate) { c.Patch = strings.Repeat("x", 4<<20+1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Candidate(id, 1, 2)
			tc.mutate(c)
			_, err := s.PutCandidate(ctx, c)
			requireViolation(t, err, tc.pointer)
		})
	}
	wrongHash := Candidate(id, 1, 2)
	wrongHash.PatchSHA256 = strings.Repeat("0", 64)
	_, err := s.PutCandidate(ctx, wrongHash)
	require.ErrorIs(t, err, domain.ErrInvalid)
	require.Contains(t, err.Error(), "/patch_sha256")
	chosen := Candidate(id, 1, 2)
	chosen.Chosen = true
	_, err = s.PutCandidate(ctx, chosen)
	require.ErrorIs(t, err, domain.ErrInvalid, "only ChooseCandidate chooses")
	require.Contains(t, err.Error(), "/chosen")

	list, err := s.ListCandidates(ctx, id)
	require.NoError(t, err)
	require.Empty(t, list, "refused candidates write nothing")

	_, err = s.PutCandidate(ctx, Candidate(id, 1, 2))
	require.NoError(t, err)
	_, err = s.ChooseCandidate(ctx, store.ChooseCandidateParams{WorkOrderID: "../" + id, Attempt: 1})
	requireViolation(t, err, "/work_order_id")
	_, err = s.ChooseCandidate(ctx, store.ChooseCandidateParams{WorkOrderID: id, Attempt: 1, Why: "won\x1b]0;x\x07"})
	requireViolation(t, err, "/why")
	_, err = s.ChooseCandidate(ctx, store.ChooseCandidateParams{WorkOrderID: id, Attempt: -1})
	requireViolation(t, err, "/attempt")
	got, err := s.GetCandidate(ctx, id, 1)
	require.NoError(t, err)
	require.False(t, got.Chosen, "refused choices change nothing")
}

func testConcurrentChoice(t *testing.T, s store.Store) {
	ctx := context.Background()
	const rounds = 5
	for r := range rounds {
		id := CandidateWorkOrder(t, s, fmt.Sprintf("obj-race-%d", r)).WorkOrderID
		for a := 1; a <= 2; a++ {
			_, err := s.PutCandidate(ctx, Candidate(id, a, 2))
			require.NoError(t, err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 3)
		for a := 1; a <= 2; a++ {
			wg.Go(func() {
				_, errs[a] = s.ChooseCandidate(ctx, store.ChooseCandidateParams{WorkOrderID: id, Attempt: a,
					Why: fmt.Sprintf("attempt %d", a)})
			})
		}
		wg.Wait()
		winner := 0
		for a := 1; a <= 2; a++ {
			if errs[a] == nil {
				require.Zero(t, winner, "two choices both succeeded")
				winner = a
				continue
			}
			require.True(t, errors.Is(errs[a], domain.ErrCandidatesSettled), "attempt %d: %v", a, errs[a])
		}
		require.NotZero(t, winner, "one choice must win")
		list, err := s.ListCandidates(ctx, id)
		require.NoError(t, err)
		var chosen []int
		for _, c := range list {
			if c.Chosen {
				chosen = append(chosen, c.Attempt)
			}
		}
		require.Equal(t, []int{winner}, chosen)
	}
}

func testObjectiveAttempts(t *testing.T, s store.Store) {
	ctx := context.Background()
	three := 3
	o := Objective("obj-a")
	o.Attempts = &three
	require.NoError(t, s.CreateObjective(ctx, o))
	got, err := s.GetObjective(ctx, "obj-a")
	require.NoError(t, err)
	require.Equal(t, o, got)
	plain := Objective("obj-plain")
	require.NoError(t, s.CreateObjective(ctx, plain))
	got, err = s.GetObjective(ctx, "obj-plain")
	require.NoError(t, err)
	require.Nil(t, got.Attempts, "absent attempts read back absent")
	for _, n := range []int{0, domain.MaxAttempts + 1} {
		bad := Objective("obj-bad")
		bad.Attempts = &n
		requireViolation(t, s.CreateObjective(ctx, bad), "/attempts")
	}
	_, err = s.GetObjective(ctx, "obj-bad")
	require.ErrorIs(t, err, domain.ErrNotFound)
}

// A candidate that ended keeps how it ended: a run finishing after the
// selection cancelled it does not turn it DONE, also when both writes
// race; writing the same ending again is a no-op retry.
func testCandidateFinished(t *testing.T, s store.Store) {
	ctx := context.Background()
	id := CandidateWorkOrder(t, s, "obj-cf").WorkOrderID
	running := func(attempt int) *domain.Candidate {
		return &domain.Candidate{WorkOrderID: id, Attempt: attempt, Generator: "command", Status: domain.CandidateRunning,
			CreatedAt: T0, UpdatedAt: T0}
	}
	cancelled := func(attempt int) *domain.Candidate {
		c := running(attempt)
		c.Status, c.Why = domain.CandidateCancelled, "cancelled while it ran"
		return c
	}
	_, err := s.PutCandidate(ctx, running(1))
	require.NoError(t, err)
	_, err = s.PutCandidate(ctx, cancelled(1))
	require.NoError(t, err)
	_, err = s.PutCandidate(ctx, Candidate(id, 1, 2))
	require.ErrorIs(t, err, domain.ErrCandidateFinished)
	_, err = s.PutCandidate(ctx, running(1))
	require.ErrorIs(t, err, domain.ErrCandidateFinished, "an ended candidate does not run again")
	_, err = s.PutCandidate(ctx, cancelled(1))
	require.NoError(t, err, "the same ending again")
	got, err := s.GetCandidate(ctx, id, 1)
	require.NoError(t, err)
	require.Equal(t, domain.CandidateCancelled, got.Status)

	// Racing: whichever commits first says how it ended; the other is refused.
	for attempt := 2; attempt <= 9; attempt++ {
		_, err := s.PutCandidate(ctx, running(attempt))
		require.NoError(t, err)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, c := range []*domain.Candidate{Candidate(id, attempt, 2), cancelled(attempt)} {
			wg.Go(func() { _, errs[i] = s.PutCandidate(ctx, c) })
		}
		wg.Wait()
		got, err := s.GetCandidate(ctx, id, attempt)
		require.NoError(t, err)
		loser := map[string]int{domain.CandidateDone: 1, domain.CandidateCancelled: 0}[got.Status]
		require.NoError(t, errs[1-loser], "attempt %d: the write that stands", attempt)
		require.ErrorIs(t, errs[loser], domain.ErrCandidateFinished, "attempt %d ended %s", attempt, got.Status)
	}
}
