// Package patchgen holds the patch generators of PATCH_DIAZOTROPH: each turns
// an objective, with a worktree checked out at the snapshot commit, into a
// candidate patch (a unified diff).
//
// A generator only proposes. The diazotroph prepares the worktree before
// Generate and validates and applies the patch after it, so a generator may
// return garbage; it must not return late. ctx carries the run's budget, and
// when it ends Generate stops (a command's whole process group is killed)
// and returns an error wrapping context.Cause(ctx).
//
// A generator that ran but produced nothing usable returns an Output with an
// empty Patch and Notes saying why: that is the run's outcome, for the gate
// to judge. Errors are for misconfiguration, ctx ending and transport
// failures, where no outcome can be attributed to the generator.
package patchgen

import (
	"context"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/sandbox"
)

// Names of the generators, as objectives and configuration spell them.
const (
	// StaticName is the generator returning the patch supplied with the
	// objective.
	StaticName = "static"
	// CommandName is the generator running a shell command, typically a
	// coding agent, in the worktree.
	CommandName = "command"
	// OpenAIName is the generator asking an OpenAI-compatible chat
	// completions endpoint.
	OpenAIName = "openai"
)

// Input is what a generator may read.
type Input struct {
	ObjectiveID string
	WorkOrderID string
	// BranchName is the branch the worktree is on, azolla/<objective_id>.
	BranchName string
	// BaseBranch and CommitSHA say what the worktree was checked out from.
	BaseBranch string
	CommitSHA  string

	Title              string
	AcceptanceCriteria []string
	// Prompt is the context snapshot's full_prompt_text: title, criteria
	// and the repository's file listing.
	Prompt string
	// StaticPatch is the patch supplied with the objective, if any.
	StaticPatch string
	// Worktree is the absolute path of the checked-out workspace.
	Worktree string
	// BudgetUSDRemaining is what is left of the objective's budget in
	// dollars; nil without a budget. The command generator tells its
	// agent (AZOLLA_BUDGET_USD_REMAINING, and a preset's own cap).
	BudgetUSDRemaining *float64
	// Candidate is which of a workorder's several candidate runs this is,
	// 1..N (docs/patches.md#several-candidates), so that a generator may
	// vary its approach; 0 when the workorder runs once. The command
	// generator tells its agent (AZOLLA_CANDIDATE); the openai generator
	// varies its sampling.
	Candidate int
	// Environment is what the repository's prepared environment adds to a
	// command's run: its caches and variables (package environment).
	Environment sandbox.Extra
	// HouseRules is the repository's AGENTS.md at the base commit, cut to
	// MaxHouseRules; "" when it has none. The openai generator puts it in
	// its prompt; an agent in the worktree finds the file itself.
	HouseRules string
	// Home, when set, is the command's HOME in place of a private one: a
	// directory of the objective's that outlives the round, where the
	// agent keeps its sessions (docs/patches.md#agent-sessions).
	Home string
	// Session is the agent's session the round before reported, which a
	// preset that can continues; "" starts a new one.
	Session string
}

// MaxHouseRules bounds what a prompt carries of a repository's AGENTS.md.
const MaxHouseRules = 16 << 10

// Output is a candidate patch.
type Output struct {
	// Patch is a unified diff, or "" if the generator produced none.
	Patch string
	// Notes say how the patch was produced, or why there is none.
	Notes string
	// Usage is what a model endpoint reported spending, when the generator
	// called one that said; nil otherwise.
	Usage *Usage
	// Report is the run report the executor wrote to $AZOLLA_REPORT_FILE
	// (the command generator), when it wrote a valid one; nil otherwise.
	Report *domain.RunReport
	// Transcript is what the run said (the command generator), not yet
	// redacted; nil when it said nothing. It comes with an error too, when
	// the run was stopped.
	Transcript *Transcript
	// Question is what the agent asks a human before it can go on (the
	// command generator: $AZOLLA_QUESTION_FILE or its report's question),
	// "" when it asks nothing. A run that asks delivers no patch: what it
	// changed is partial work.
	Question string
}

// Generator produces candidate patches.
type Generator interface {
	// Name is one of StaticName, CommandName, OpenAIName.
	Name() string
	// Generate produces a candidate patch; see the package documentation
	// for what is an error and what is an empty Output.
	Generate(ctx context.Context, in Input) (Output, error)
}

// HouseRulesReader is implemented by generators that put the repository's
// AGENTS.md in their prompt (openai); for the others it is not read, which
// saves a git run on every workorder.
type HouseRulesReader interface {
	ReadsHouseRules() bool
}

// WorktreeKeeper is implemented by generators that never write to the
// worktree (static, openai). The patch flow can then apply their patch to
// the worktree as prepared; after any other generator it resets it first.
type WorktreeKeeper interface {
	KeepsWorktree() bool
}
