package activities

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/store"
)

// PullRequests are the pull request steps (docs/pull-requests.md): the
// one pull request of an objective's PASS, and what its reviews, checks
// and merge do to the objective.
type PullRequests struct {
	Base
	Store pullRequestStore
	// Forges gives each repository's forge; nil when no repository has
	// one.
	Forges Forges
}

// pullRequestStore is what the pull request steps read and write: the
// passed round, the objective, its pull request and the feedback on it,
// the spend that bounds a new round, the round's event and the pauses
// they hand a human.
type pullRequestStore interface {
	store.Transactor
	store.ObjectiveQuerier
	store.EventQuerier
	store.RunQuerier
	store.PauseQuerier
	store.PullRequestQuerier
	store.PullRequestFeedbackQuerier
	store.SpendQuerier
	store.IntakeQuerier
}

// observePullRequest tells the observer, if any.
func (a *PullRequests) observePullRequest(event string) {
	if a.Observer != nil {
		a.Observer.PullRequest(event)
	}
}

// ForgeTarget is a repository's forge, as the pull request step uses it.
type ForgeTarget struct {
	Forge forge.Forge
	// Kind and Repository say where it is (forge.KindGitea …, owner/name).
	Kind, Repository string
	Draft            bool
	Labels           []string
	Reviewers        []string
	// AutoRevise starts a round on requested changes or a failed check
	// without a human, while the pull request has had fewer than
	// MaxRounds; PollInterval is how often it is read.
	AutoRevise   bool
	MaxRounds    int
	PollInterval time.Duration
	// Trust says whose reviews may be taken (forge.trusted); its zero
	// value takes no one's.
	Trust forge.Trust
}

// Forges are the repositories' forges.
type Forges interface {
	// Has says whether a repository has a forge: a look at configuration,
	// cheap enough for the gate's transaction.
	Has(repository string) bool
	// Open builds a repository's forge client, reading its token; nil and
	// no error when it has none. It makes no call.
	Open(repository string) (*ForgeTarget, error)
}

// PullRequestInput names the workorder whose PASS gets a pull request.
type PullRequestInput struct {
	WorkOrderID string
}

// PullRequestResult is the objective's pull request.
type PullRequestResult struct {
	Number int
	URL    string
	// Created says this call opened it; false when it was adopted or
	// already recorded.
	Created bool
}

// Error types of the pull request step that a retry does not fix.
const (
	ErrTypeForgeRefused = "ForgeRefused"
	ErrTypeForgeMissing = "ForgeNotConfigured"
)

// OpenPullRequest opens, or adopts, the one pull request of the
// objective of a workorder the gate passed, and records it
// (docs/pull-requests.md). It is safe to run again at any point: the
// forge adopts an open pull request from the same head branch rather
// than open a second, and the store records one per objective, so a
// worker that dies after the forge answered leaves nothing twice.
func (a *PullRequests) OpenPullRequest(ctx context.Context, in PullRequestInput) (PullRequestResult, error) {
	w, err := a.Store.GetWorkOrder(ctx, in.WorkOrderID)
	if err != nil {
		return PullRequestResult{}, permanent(fmt.Errorf("pull request of workorder %q: %w", in.WorkOrderID, err))
	}
	log := logger(ctx, w.ObjectiveID, w.WorkOrderID)
	req, err := a.pullRequestFor(ctx, w)
	if err != nil {
		return PullRequestResult{}, err
	}
	prev, err := a.Store.GetPullRequest(ctx, w.ObjectiveID)
	switch {
	case err == nil && prev.State == domain.PullRequestMerged:
		return PullRequestResult{Number: prev.Number, URL: prev.URL}, nil
	case errors.Is(err, domain.ErrNotFound):
		prev = nil
	case err != nil:
		return PullRequestResult{}, fmt.Errorf("pull request of objective %s: %w", w.ObjectiveID, err)
	}
	pr, created, err := req.target.Forge.OpenOrAdopt(ctx, req.open)
	if err != nil && created && pr.Number > 0 {
		// Open, but without its labels or reviewers: recorded all the
		// same, or a retry would adopt it without saying so.
		log.Warn("pull request opened without its labels or reviewers", "url", pr.URL, "error", err)
		err = nil
	}
	if errors.Is(err, forge.ErrNotFound) {
		// Most likely the branch: a forge answers 404 to a pull request
		// from a head it does not have, as when the run's push failed.
		err = fmt.Errorf("%w (the forge has no branch %s, or no repository %s: the run's notes say whether its push failed)",
			err, req.open.Head, req.target.Repository)
	}
	if err != nil {
		return PullRequestResult{}, forgeError(fmt.Errorf("open or adopt the pull request of %s on %s %s: %w",
			req.open.Head, req.target.Kind, req.target.Repository, err))
	}
	rec, fresh, err := a.Store.RecordPullRequest(ctx, store.RecordPullRequestParams{
		ObjectiveID: w.ObjectiveID, WorkOrderID: w.WorkOrderID, Forge: req.target.Kind,
		Repository: req.target.Repository, Number: pr.Number, URL: pr.URL, HeadBranch: req.open.Head,
		BaseBranch: req.open.Base, HeadSHA: req.commit, Adopted: !created, Now: a.now()})
	if err != nil {
		return PullRequestResult{}, permanent(fmt.Errorf("record pull request %s: %w", pr.URL, err))
	}
	log.Info("pull request recorded", "url", rec.URL, "number", rec.Number, "created", created)
	switch {
	case fresh && created:
		a.observePullRequest(PullRequestOpened)
	case fresh:
		a.observePullRequest(PullRequestAdopted)
	}
	if prev != nil && prev.State == domain.PullRequestOpen && prev.Number == rec.Number && prev.WorkOrderID != w.WorkOrderID {
		// A new round pushed to the same pull request: say so there, once
		// (after the record, so a retry finds its workorder and says
		// nothing; a failure here loses the note, never the round).
		if err := req.target.Forge.Comment(ctx, rec.Number, roundComment(rec, w, req.commit)); err != nil {
			log.Warn("round not announced on the pull request", "url", rec.URL, "error", err)
		}
	}
	return PullRequestResult{Number: rec.Number, URL: rec.URL, Created: created}, nil
}

// openRequest is what OpenPullRequest asks of the forge.
type openRequest struct {
	target *ForgeTarget
	open   forge.NewPullRequest
	commit string
}

// pullRequestFor gathers the pull request of w's objective: its forge,
// head and base, title and body.
func (a *PullRequests) pullRequestFor(ctx context.Context, w *domain.WorkOrder) (openRequest, error) {
	fail := func(err error) (openRequest, error) {
		return openRequest{}, permanent(fmt.Errorf("pull request of workorder %s: %w", w.WorkOrderID, err))
	}
	rr, err := a.Store.GetRunRecord(ctx, w.WorkOrderID)
	if err != nil {
		return fail(err)
	}
	if rr.GateResult != domain.GatePass || rr.CommitSHA == "" {
		return fail(fmt.Errorf("the gate's verdict is %s without a commit: no pull request", rr.GateResult))
	}
	o, err := a.Store.GetObjective(ctx, w.ObjectiveID)
	if err != nil {
		return fail(err)
	}
	b, err := a.Store.GetOutputBundle(ctx, w.WorkOrderID)
	if err != nil {
		return fail(err)
	}
	snap, err := a.Store.GetContextSnapshot(ctx, w.ContextSnapshotID)
	if err != nil {
		return fail(err)
	}
	target, err := a.forgeOf(o)
	if err != nil {
		return openRequest{}, err
	}
	closes, err := a.closesLine(ctx, o, target)
	if err != nil {
		return openRequest{}, err
	}
	return openRequest{target: target, commit: rr.CommitSHA, open: forge.NewPullRequest{
		Head: b.Metadata.BranchName, Base: snap.Metadata.BaseBranch, Title: pullRequestTitle(o, b),
		Body: pullRequestBody(o, w, rr, b, closes), Draft: target.Draft, Labels: target.Labels,
		Reviewers: target.Reviewers}}, nil
}

// closesLine is the line that has the forge close the issue o was made
// from when its pull request merges; "" when o came from no issue of the
// pull request's repository.
func (a *PullRequests) closesLine(ctx context.Context, o *domain.Objective, target *ForgeTarget) (string, error) {
	it, err := intakeItemOf(ctx, a.Store, o.ObjectiveID)
	if err != nil || it == nil {
		return "", err
	}
	number, err := strconv.Atoi(it.ExternalID)
	if err != nil || !strings.HasPrefix(it.Source, target.Kind+":") || !strings.HasSuffix(it.Source, "/"+target.Repository) {
		return "", nil
	}
	return forge.ClosesLine(target.Kind, number), nil
}

// pullRequestTitle is the bundle's title, or the objective's.
func pullRequestTitle(o *domain.Objective, b *domain.OutputBundle) string {
	if t := strings.TrimSpace(b.Title); t != "" {
		return t
	}
	return o.Title
}

// pullRequestBody is the drafted description, the acceptance criteria
// and the way back to azolla's records.
func pullRequestBody(o *domain.Objective, w *domain.WorkOrder, rr *domain.RunRecord, b *domain.OutputBundle, closes string) string {
	var s strings.Builder
	if closes != "" {
		s.WriteString(closes + "\n\n")
	}
	if d := strings.TrimSpace(b.Metadata.PRDescriptionDraft); d != "" {
		s.WriteString(d)
		s.WriteString("\n\n")
	}
	if len(o.AcceptanceCriteria) > 0 {
		s.WriteString("## Acceptance criteria\n\n")
		for _, c := range o.AcceptanceCriteria {
			fmt.Fprintf(&s, "- [ ] %s\n", c)
		}
		s.WriteString("\n")
	}
	fmt.Fprintf(&s, "---\nOpened by azolla for objective `%s` (workorder `%s`, gate %s at `%s`). "+
		"`azolla objective show %s` has the run record.\n", o.ObjectiveID, w.WorkOrderID, rr.GateResult,
		rr.CommitSHA, o.ObjectiveID)
	return s.String()
}

// forgeError makes a forge's refusal permanent and its rate limit a retry
// after the delay it asked for; anything else (the forge down, a timeout)
// is retried with the activity's backoff.
func forgeError(err error) error {
	var rl *forge.RateLimitError
	switch {
	case errors.As(err, &rl):
		return temporal.NewApplicationErrorWithOptions(err.Error(), "ForgeRateLimited",
			temporal.ApplicationErrorOptions{NextRetryDelay: rl.RetryAfter, Cause: err})
	case errors.Is(err, forge.ErrUnauthorized), errors.Is(err, forge.ErrNotFound):
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeForgeRefused, err)
	}
	return err
}

// permanentForge is a forge error no retry fixes: its configuration.
func permanentForge(msg string, cause error) error {
	return temporal.NewNonRetryableApplicationError(msg, ErrTypeForgeMissing, cause)
}

// roundComment announces a round's commit on the pull request.
func roundComment(pr *domain.PullRequest, w *domain.WorkOrder, commit string) string {
	return fmt.Sprintf("azolla: round %d pushed `%s` (workorder `%s`, gate PASS) to this pull request. "+
		"`azolla objective show %s` has its run record.", pr.Rounds, commit, w.WorkOrderID, w.ObjectiveID)
}
