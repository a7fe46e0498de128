// Package transition is the objective's state machine (docs/protocol/lifecycle.md#statuses-and-transitions):
// one table of the status transitions the lifecycle makes. Readiness, the
// scheduler, the gate and the workflow all ask it, so no step spells a
// status rule of its own.
//
//	        approve            schedule              pass
//	 NEW ─────────────▶ TODO ───────────▶ IN_PROGRESS ──────▶ DONE
//	  │                 ▲  │ block              │ fail (blocker_ref gate:<wo>)
//	  │ reject          │  ▼                    ▼
//	  ▼          retry, │ BLOCKED              TODO ── retry ──▶ TODO
//	(NEW, paused) unblock └──────┘ ▲
//	                               │ environment (its setup, a tool or a limit
//	                               │ failed the run, not the patch: blockers)
//	                          IN_PROGRESS
//
//	 DONE ── revise (its pull request open, review or checks asked for
//	         changes) ──▶ TODO
//
// Reject is in the table too, though it leaves the status as it is: it is
// the human's other answer to a NEW objective.
package transition

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// Name names one transition.
type Name string

// The transitions.
const (
	// Approve is the human's validation: NEW -> TODO.
	Approve Name = "approve"
	// Reject is the human's refusal of a NEW objective; the status stays.
	Reject Name = "reject"
	// Retry re-emits after a failed gate or a block: TODO|BLOCKED -> TODO,
	// blocker_ref cleared.
	Retry Name = "retry"
	// Unblock is Retry that also clears the blockers: the human says they
	// are resolved.
	Unblock Name = "unblock"
	// Schedule gives a TODO objective its workorder: TODO -> IN_PROGRESS.
	Schedule Name = "schedule"
	// Block records unresolved blockers: TODO -> BLOCKED.
	Block Name = "block"
	// Pass is the gate's PASS: IN_PROGRESS -> DONE, blocker_ref cleared.
	Pass Name = "pass"
	// Fail is the gate's FAIL: IN_PROGRESS -> TODO with a gate blocker_ref,
	// waiting for a human's retry.
	Fail Name = "fail"
	// Environment is the gate's FAIL that is the environment's, not the
	// patch's (its setup failed, a gate command could not start, a run hit
	// a sandbox limit): IN_PROGRESS -> BLOCKED, with a blocker naming it and
	// a gate blocker_ref, waiting for a human to fix the environment and
	// unblock.
	Environment Name = "environment"
	// Revise takes a DONE objective back to work on its open pull request:
	// DONE -> TODO, when a review asked for changes or a check failed
	// (docs/pull-requests.md). The pull request being open is the
	// caller's check, in the same transaction.
	Revise Name = "revise"
)

// Rule is one row of the table.
type Rule struct {
	From []domain.Status
	// To is the status afterwards; "" leaves it unchanged (Reject).
	To domain.Status
	// ClearBlockerRef and ClearBlockers say what the transition clears.
	ClearBlockerRef, ClearBlockers bool
}

var table = map[Name]Rule{
	Approve:     {From: []domain.Status{domain.StatusNew}, To: domain.StatusTodo},
	Reject:      {From: []domain.Status{domain.StatusNew}},
	Retry:       {From: []domain.Status{domain.StatusTodo, domain.StatusBlocked}, To: domain.StatusTodo, ClearBlockerRef: true},
	Unblock:     {From: []domain.Status{domain.StatusTodo, domain.StatusBlocked}, To: domain.StatusTodo, ClearBlockerRef: true, ClearBlockers: true},
	Schedule:    {From: []domain.Status{domain.StatusTodo}, To: domain.StatusInProgress},
	Block:       {From: []domain.Status{domain.StatusTodo}, To: domain.StatusBlocked},
	Pass:        {From: []domain.Status{domain.StatusInProgress}, To: domain.StatusDone, ClearBlockerRef: true},
	Fail:        {From: []domain.Status{domain.StatusInProgress}, To: domain.StatusTodo},
	Environment: {From: []domain.Status{domain.StatusInProgress}, To: domain.StatusBlocked},
	Revise:      {From: []domain.Status{domain.StatusDone}, To: domain.StatusTodo, ClearBlockerRef: true},
}

// Rule returns n's row of the table; it panics on a name not in it, which
// is a programming error.
func (n Name) Rule() Rule {
	r, ok := table[n]
	if !ok {
		panic(fmt.Sprintf("transition: unknown transition %q", n))
	}
	return r
}

// Allows reports whether an objective in status may take n.
func (n Name) Allows(status domain.Status) bool { return slices.Contains(n.Rule().From, status) }

// Refusal is the error for an objective in status that may not take n.
func (n Name) Refusal(objectiveID string, status domain.Status) error {
	r := n.Rule()
	return domain.ObjectiveTransitionError(objectiveID, status, r.From, cmp.Or(string(r.To), string(n)))
}

// Params are the store parameters of n for one objective at now. The
// caller adds what n sets rather than clears: Block's blockers and
// blocker_ref, Fail's blocker_ref, Environment's blockers and blocker_ref. It panics for Reject, which writes no
// transition.
func (n Name) Params(objectiveID string, now time.Time) store.TransitionObjectiveParams {
	r := n.Rule()
	if r.To == "" {
		panic(fmt.Sprintf("transition: %s changes no status", n))
	}
	p := store.TransitionObjectiveParams{ObjectiveID: objectiveID, From: r.From, To: r.To, Now: now}
	if r.ClearBlockerRef {
		none := domain.BlockerRef("")
		p.BlockerRef = &none
	}
	if r.ClearBlockers {
		none := []string{}
		p.Blockers = &none
	}
	return p
}

// Executable reports whether the scheduler may give an objective in status
// a workorder (docs/protocol/lifecycle.md#scheduling): only TODO; NEW awaits approval, DONE and
// BLOCKED are settled, IN_PROGRESS has its workorder.
func Executable(status domain.Status) bool { return Schedule.Allows(status) }

// Settled reports the state in which a retry or an unblock of the objective
// already took effect: TODO with no blocker_ref and, for Unblock, no
// blockers. A retried readiness step finds its own committed transition so.
func (n Name) Settled(o *domain.Objective) bool {
	r := n.Rule()
	return o.Status == r.To && o.BlockerRef == "" && (!r.ClearBlockers || len(o.Blockers) == 0)
}
