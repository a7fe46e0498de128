// Package diazotroph holds azolla's executor plugins. A diazotroph turns one
// workorder, with its frozen context snapshot, into the content of one output
// bundle; the runner activity chooses it by workorder.diazotroph_type through
// a Registry and persists what it returns.
//
// A diazotroph does no storage and knows nothing of leases: the runner holds
// the workorder's claim, renews it while Execute runs and cancels ctx as soon
// as the claim is lost, and Execute must then stop promptly. The budget is
// the diazotroph's to enforce: when it expires, Execute returns a Result with
// RunnerStatus BUDGET_EXHAUSTED, empty content and notes that say so.
package diazotroph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/azolla/azolla/internal/domain"
)

// Request is everything a diazotroph may read.
type Request struct {
	WorkOrder domain.WorkOrder
	Snapshot  domain.ContextSnapshot
	Objective domain.Objective
	// Budget is workorder.budget_ms as a duration.
	Budget time.Duration
	// Resume, when set, is the partial work the objective's round before
	// this one left (its budget ran out, it stalled), for this round to
	// start from.
	Resume *Resume
	// Revise, when set, is the objective's open pull request this round
	// revises: the round starts from its head and adds a commit on top.
	Revise *Revise
	// Session is the agent's session the objective's round before
	// reported (its run report's session_id), for an agent that can to
	// continue; "" starts a new one.
	Session string
}

// Revise is an open pull request a round revises: its URL and its head
// (as the forge has it, else as its last round pushed it).
type Revise struct {
	PullRequest string `json:"pull_request"`
	HeadSHA     string `json:"head_sha"`
	// Conflicts: the forge says the pull request does not merge into its
	// base branch as it is: the round merges the base in.
	Conflicts bool `json:"conflicts,omitempty"`
}

// Resume is the round before's partial work and why that round ended.
type Resume struct {
	WorkOrderID string             `json:"work_order_id"`
	Partial     domain.PartialWork `json:"partial"`
	// Why is that round's verdict, as its gate gave it.
	Why string `json:"why,omitempty"`
}

// Result becomes the workorder's output bundle.
type Result struct {
	Title        string
	Content      string
	Notes        string
	Metadata     domain.BundleMetadata
	RunnerStatus string
}

// Diazotroph executes workorders of one diazotroph_type.
type Diazotroph interface {
	// Type is the diazotroph_type it serves, e.g. COMMAND_DIAZOTROPH.
	Type() string
	// Execute runs the workorder. An error means no result could be produced
	// and none must be persisted (ctx cancelled, misconfiguration); a run that
	// failed on its own terms is a Result whose notes say why.
	Execute(ctx context.Context, req Request) (Result, error)
}

// Stop is the cause of a run's context cancelled because its work is no
// longer wanted: a diazotroph that can ends such a run with a
// RunnerStopped result (keeping what it can) rather than an error.
type Stop struct{ Why string }

func (s *Stop) Error() string { return "stopped: " + s.Why }

// StopOf is the Stop that ended ctx, nil when ctx is live or ended
// otherwise.
func StopOf(ctx context.Context) *Stop {
	var s *Stop
	if ctx.Err() != nil && errors.As(context.Cause(ctx), &s) {
		return s
	}
	return nil
}

// ErrUnknownType is returned by Lookup for a type nobody registered.
var ErrUnknownType = errors.New("unknown diazotroph type")

// Registry maps diazotroph types to their implementation.
type Registry struct {
	mu sync.RWMutex
	m  map[string]Diazotroph
}

// NewRegistry returns a registry holding ds.
func NewRegistry(ds ...Diazotroph) *Registry {
	r := &Registry{m: map[string]Diazotroph{}}
	for _, d := range ds {
		r.Register(d)
	}
	return r
}

// Register adds d, replacing any diazotroph of the same type.
func (r *Registry) Register(d Diazotroph) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m[d.Type()] = d
}

// Lookup returns the diazotroph for typ, or an error wrapping ErrUnknownType
// that lists the registered types.
func (r *Registry) Lookup(typ string) (Diazotroph, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if d, ok := r.m[typ]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("%w %q (registered: %v)", ErrUnknownType, typ, r.typesLocked())
}

// Types returns the registered types, sorted.
func (r *Registry) Types() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.typesLocked()
}

func (r *Registry) typesLocked() []string {
	out := make([]string, 0, len(r.m))
	for t := range r.m {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}
