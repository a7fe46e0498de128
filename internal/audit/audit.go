package audit

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/azolla/azolla/internal/store"
)

// Rule ids. They are part of verify's output: scripts match on them.
const (
	RuleWorkOrderPerEvent     = "workorder-per-event"
	RuleBundlePerExecuted     = "bundle-per-executed-workorder"
	RuleRunRecordPerGated     = "run-record-per-gated-workorder"
	RuleEventProcessedOnce    = "event-processed-once"
	RuleClaimSchema           = "claim-schema"
	RuleNoLiveClaimOnFinished = "no-live-claim-on-finished"
	RuleObjectiveStatus       = "objective-status"
	RuleTerminalPauseState    = "terminal-pause-state"

	// Control-plane jobs (see jobs.go; docs/protocol/control-plane.md).
	RuleJobOneOpenAttempt         = "job-one-open-attempt"
	RuleJobSucceededOnce          = "job-succeeded-once"
	RuleJobNoLiveLeaseWhenSettled = "job-no-live-lease-when-settled"
	RuleJobMessagePending         = "job-message-pending-while-running"
	RuleJobSchema                 = "job-schema"

	// Task management (see tasks.go; docs/protocol/tasks.md).
	RuleCaptureReadyOnce         = "capture-ready-once"
	RuleCaptureProcessedByTriage = "capture-processed-by-its-triage"
	RuleTrackOneActive           = "track-one-active"

	// Pull requests (see pullrequests.go).
	RulePullRequestSchema            = "pull-request-schema"
	RulePullRequestOfPassedWorkOrder = "pull-request-of-passed-workorder"
	RuleFeedbackTakenFromTrusted     = "pull-request-feedback-from-trusted"

	// Best-of-N candidates (see candidates.go).
	RuleCandidateChosenOnce     = "candidate-chosen-once"
	RuleBundleIsChosenCandidate = "bundle-is-chosen-candidate"
	RuleCandidateOfWorkOrder    = "candidate-of-existing-workorder"

	// Work from the forge and other trackers (see intake.go).
	RuleIntakeOnePerItem       = "intake-one-per-item"
	RuleForgeCommandAuthorized = "forge-command-from-authorized"
)

// rules run in this order, which is also the order of the report.
var rules = []struct {
	id    string
	check func(s *state, r recorder)
}{
	{RuleWorkOrderPerEvent, workOrderPerEvent},
	{RuleBundlePerExecuted, bundlePerExecutedWorkOrder},
	{RuleRunRecordPerGated, runRecordPerGatedWorkOrder},
	{RuleEventProcessedOnce, eventProcessedOnce},
	{RuleClaimSchema, claimSchema},
	{RuleNoLiveClaimOnFinished, noLiveClaimOnFinished},
	{RuleObjectiveStatus, objectiveStatus},
	{RuleTerminalPauseState, terminalPauseState},
	{RuleCaptureReadyOnce, captureReadyOnce},
	{RuleCaptureProcessedByTriage, captureProcessedByItsTriage},
	{RuleTrackOneActive, trackOneActive},
	{RulePullRequestSchema, pullRequestSchema},
	{RulePullRequestOfPassedWorkOrder, pullRequestOfPassedWorkOrder},
	{RuleFeedbackTakenFromTrusted, feedbackTakenFromTrusted},
	{RuleCandidateChosenOnce, candidateChosenOnce},
	{RuleBundleIsChosenCandidate, bundleIsChosenCandidate},
	{RuleCandidateOfWorkOrder, candidateOfWorkOrder},
	{RuleIntakeOnePerItem, intakeOnePerItem},
	{RuleForgeCommandAuthorized, forgeCommandAuthorized},
	{RuleJobOneOpenAttempt, jobOneOpenAttempt},
	{RuleJobSucceededOnce, jobSucceededOnce},
	{RuleJobNoLiveLeaseWhenSettled, jobNoLiveLeaseWhenSettled},
	{RuleJobMessagePending, jobMessagePending},
	{RuleJobSchema, jobSchema},
}

// Rules returns every rule id in the order they run.
func Rules() []string {
	out := make([]string, len(rules))
	for i, r := range rules {
		out[i] = r.id
	}
	return out
}

// Violation is one broken guarantee.
type Violation struct {
	// Rule is the stable id of the broken rule, e.g. "workorder-per-event".
	Rule string `json:"rule"`
	// Resource names the record at fault, e.g. "event ev-1".
	Resource string `json:"resource"`
	Message  string `json:"message"`
}

// Report is the outcome of one audit.
type Report struct {
	// Checked maps every rule id to the number of items it examined.
	Checked map[string]int `json:"checked"`
	// Violations are ordered by rule, then resource; never nil.
	Violations []Violation `json:"violations"`
	// Skipped says which checks could not run, and why: the Querier given
	// offers no read-only SQL access or no jobs, or no transport was given
	// (WithMessages).
	Skipped []string `json:"skipped,omitempty"`
}

// Items is the number of items checked over all rules.
func (r *Report) Items() int {
	n := 0
	for _, c := range r.Checked {
		n += c
	}
	return n
}

// Option tunes Run.
type Option func(*options)

type options struct {
	grace    time.Duration
	messages MessageStates
}

// WithGrace makes a live claim count against no-live-claim-on-finished only
// once its heartbeat_at is older than now-grace, for auditing a system whose
// workers are running (they release a claim just after the terminal write).
// The default, 0, counts every live claim.
func WithGrace(grace time.Duration) Option { return func(o *options) { o.grace = grace } }

// Reader is what the audit reads of the store: every record a rule
// checks. Run reads the jobs (store.JobStore) and counts rows through SQL
// (DB() *sql.DB) too when the store behind it offers them.
type Reader interface {
	store.ObjectiveQuerier
	store.EventQuerier
	store.RunQuerier
	store.PauseQuerier
	store.CaptureQuerier
	store.ClaimQuerier
	store.PullRequestQuerier
	store.PullRequestFeedbackQuerier
	store.CandidateQuerier
	store.IntakeQuerier
}

// Run reads the whole store through q and checks every rule at now (zero
// means the current time). It returns an error only when the store, or the
// transport given WithMessages, cannot be read; broken guarantees are the
// report's violations.
func Run(ctx context.Context, q Reader, now time.Time, opts ...Option) (*Report, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	s, err := load(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	s.now, s.grace = store.NowOr(now), o.grace
	skipped, err := s.loadJobs(ctx, q, o.messages)
	if err != nil {
		return nil, fmt.Errorf("audit jobs: %w", err)
	}

	rep := &Report{Checked: make(map[string]int, len(rules)), Violations: []Violation{}}
	if s.bundleRows == nil {
		rep.Skipped = append(rep.Skipped, "duplicate and orphaned output_bundles, run_records and candidates rows: the store offers no read-only SQL access (DB() *sql.DB)")
	}
	rep.Skipped = append(rep.Skipped, skipped...)
	order := make(map[string]int, len(rules))
	for i, rule := range rules {
		order[rule.id] = i
		rep.Checked[rule.id] = 0
		rule.check(s, recorder{rep: rep, rule: rule.id})
	}
	slices.SortStableFunc(rep.Violations, func(a, b Violation) int {
		return cmp.Or(cmp.Compare(order[a.Rule], order[b.Rule]), cmp.Compare(a.Resource, b.Resource))
	})
	return rep, nil
}

// recorder is how a rule reports, under its own id.
type recorder struct {
	rep  *Report
	rule string
}

func (r recorder) checked(n int) { r.rep.Checked[r.rule] += n }

func (r recorder) violation(resource, format string, args ...any) {
	r.rep.Violations = append(r.rep.Violations, Violation{Rule: r.rule, Resource: resource, Message: fmt.Sprintf(format, args...)})
}
