package activities

import (
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/store"
)

// Steps are an objective's own steps: readiness (readiness.go), the
// scheduler (schedule.go), the runner (run.go) and the gate (gate.go).
type Steps struct {
	Base
	Claimant
	Store stepStore
	// Diazotrophs run workorders here, and check their bundles at the
	// gate.
	Diazotrophs *diazotroph.Registry
	// Diazotroph is the diazotroph_type the scheduler writes for objectives
	// that name no repository; those that do get diazotroph.PatchType.
	Diazotroph string
	// Targets resolves the repository of objectives that name one.
	Targets diazotroph.Targets
	// Budget becomes each new workorder's budget_ms.
	Budget time.Duration
	// TaskBudget is a track workorder's budget (TaskOptions.Budget): Run
	// extends the track's claim by it and three leases.
	TaskBudget time.Duration
	// Retention is how long a finished workorder's workspace is kept
	// (patch.retention): the gate tells the human when a branch that was
	// not pushed will go with it. Zero: workspaces are kept, no warning.
	Retention time.Duration
	// Remote, when set, routes some diazotroph types to remote workers
	// through the control plane instead of running them here.
	Remote *Remote
	// Forges gives each repository's forge: a PASS there gets a pull
	// request. Nil when no repository has one.
	Forges Forges
	// EarlyStop and ParallelCandidates are what the workorders of
	// objectives with several attempts say of their candidates
	// (WorkOrderRef): whether the first to pass every gate command stops
	// the others, and, above 0, how many run at a time.
	EarlyStop          bool
	ParallelCandidates int
	// GateCommands says whether a repository's gate runs commands
	// (WorkOrderRef.GateCommands); nil: none does.
	GateCommands func(repository string) bool
}

// stepStore is what an objective's steps read and write: the objective,
// its events, rounds, pauses, pull request and candidates (Load, and the
// gate's metrics), and the claims they take.
type stepStore interface {
	store.Transactor
	store.ObjectiveQuerier
	store.EventQuerier
	store.RunQuerier
	store.PauseQuerier
	store.PullRequestQuerier
	store.CandidateQuerier
	store.ClaimQuerier
	store.IntakeQuerier
}

// roundReader reads what a step's stored outcome is rebuilt from, in a
// transaction or out of one.
type roundReader interface {
	store.ObjectiveQuerier
	store.RunQuerier
	store.PauseQuerier
}

// shape sets what the lifecycle needs of o to run a workorder of it: its
// urgency and repository (who gets the next run slot), and how many
// candidates it runs (its attempts, for a patch workorder; none
// otherwise).
func (a *Steps) shape(ref *WorkOrderRef, o *domain.Objective) {
	if ref == nil {
		return
	}
	ref.Urgency, ref.Repository = o.Urgency, o.Repository
	ref.GateCommands = a.GateCommands != nil && a.GateCommands(o.Repository)
	if ref.DiazotrophType != diazotroph.PatchType || o.Attempts == nil || *o.Attempts < 2 {
		return
	}
	ref.Attempts, ref.EarlyStop, ref.Parallel = *o.Attempts, a.EarlyStop, a.ParallelCandidates
}
