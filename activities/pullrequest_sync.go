package activities

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/lifecycle/budget"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/internal/lifecycle/transition"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/textsafe"
)

// SyncPullRequestInput asks for one look at an objective's pull request.
type SyncPullRequestInput struct {
	ObjectiveID string
	// Revise: a human asked for the next round (objective retry); By and
	// Comment are theirs.
	Revise      bool
	By, Comment string
}

// SyncPullRequestResult is what the look found and did.
type SyncPullRequestResult struct {
	State domain.PullRequestState
	URL   string
	// Waiting summarises feedback that asks for changes and has not been
	// taken into a round: a human confirms it with objective retry.
	Waiting string
	// Revised is the TICKET_READY event of the round it started; the
	// objective is TODO.
	Revised *ReadyResult
	// Pause is a pause state it wrote (closed without merge, the round
	// limit reached).
	Pause *domain.PauseState
	// PollInterval is when to look again.
	PollInterval time.Duration
}

// maxFeedback bounds the feedback an event carries: its comment's bound.
const maxFeedback = maxComment

// SyncPullRequest reads the objective's pull request on its forge and acts
// on it (docs/pull-requests.md#after-the-pull-request): merged, it is
// recorded MERGED; closed without merge, a pause state says so; reviews
// asking for changes and failed checks on azolla's head are feedback,
// taken into a new round at once with forge.auto_revise (up to
// max_rounds) or when a human asks (in.Revise), else reported as waiting.
// Feedback is taken once: the store's cursor moves by compare-and-swap in
// the transaction that starts the round, so a retry of this step, or two
// of them, start one round.
func (a *PullRequests) SyncPullRequest(ctx context.Context, in SyncPullRequestInput) (SyncPullRequestResult, error) {
	pr, err := a.Store.GetPullRequest(ctx, in.ObjectiveID)
	if err != nil {
		return SyncPullRequestResult{}, permanent(fmt.Errorf("pull request of objective %q: %w", in.ObjectiveID, err))
	}
	res := SyncPullRequestResult{State: pr.State, URL: pr.URL, PollInterval: time.Minute}
	if pr.State == domain.PullRequestMerged {
		return res, nil
	}
	o, err := a.Store.GetObjective(ctx, in.ObjectiveID)
	if err != nil {
		return res, permanent(err)
	}
	target, err := a.forgeOf(o)
	if err != nil {
		return res, err
	}
	res.PollInterval = target.PollInterval
	fpr, err := target.Forge.PullRequest(ctx, pr.Number)
	if err != nil {
		return res, forgeError(fmt.Errorf("read %s: %w", pr.URL, err))
	}
	switch fpr.State {
	case forge.StateMerged:
		return a.pullRequestMerged(ctx, pr, res)
	case forge.StateClosed:
		return a.pullRequestClosed(ctx, o, pr, res)
	}
	closed, err := a.closedInReview(ctx, o, pr, &res)
	if err != nil {
		return res, err
	}
	fb, err := readFeedback(ctx, target, pr, fpr, a.now())
	if err != nil {
		return res, forgeError(fmt.Errorf("read the feedback on %s: %w", pr.URL, err))
	}
	if err := a.recordRefused(ctx, pr, fb.refused); err != nil {
		return res, err
	}
	res.Waiting = fb.summary()
	switch {
	case in.Revise:
	case !fb.asksForChanges():
		// Approvals and plain comments start nothing; they are read once.
		if fb.cursor != forge.Cursor(pr.ReviewCursor) {
			_, err := a.Store.AdvancePullRequestCursor(ctx, store.AdvancePullRequestCursorParams{
				ObjectiveID: o.ObjectiveID, From: pr.ReviewCursor, To: string(fb.cursor), Now: a.now()})
			if err != nil && !errors.Is(err, domain.ErrPullRequestStale) {
				return res, fmt.Errorf("move the review cursor of %s: %w", pr.URL, err)
			}
		}
		return res, nil
	case !target.AutoRevise || closed:
		// With its issue closed, feedback waits for a human's retry.
		return res, nil
	case pr.Rounds >= target.MaxRounds:
		ps := pause.RevisionLimit(o.ObjectiveID, o.StatusSeq, pr.URL, target.MaxRounds, res.Waiting, a.now())
		if _, _, err := a.Store.CreatePauseStateOnce(ctx, &ps); err != nil {
			return res, fmt.Errorf("pause at the round limit: %w", err)
		}
		res.Pause = &ps
		return res, nil
	}
	return a.revise(ctx, o, pr, fb, in, res)
}

// closedInReview says whether the issue o came from was closed on its
// forge while pr is open, and then hands it back once (CLOSED_ON_FORGE,
// in res): the pull request stays followed, a merge still recorded, but
// its reviews start no round by themselves.
func (a *PullRequests) closedInReview(ctx context.Context, o *domain.Objective, pr *domain.PullRequest,
	res *SyncPullRequestResult) (bool, error) {
	issue, err := closedIssue(ctx, a.Store, o.ObjectiveID)
	if err != nil || issue == "" {
		return false, err
	}
	ps := pause.ClosedInReview(o.ObjectiveID, o.StatusSeq, pr.WorkOrderID, issue, pr.URL, a.now())
	stored, _, err := a.Store.CreatePauseStateOnce(ctx, &ps)
	if err != nil {
		return true, fmt.Errorf("pause for the closed issue: %w", err)
	}
	res.Pause = stored
	return true, nil
}

// recordRefused records the feedback of untrusted authors before the
// review cursor can move past it, so that a human sees it (objective show,
// inbox) though no round ever takes it.
func (a *PullRequests) recordRefused(ctx context.Context, pr *domain.PullRequest, refused []*domain.PullRequestFeedback) error {
	if len(refused) == 0 {
		return nil
	}
	n, err := a.Store.RecordPullRequestFeedback(ctx, refused)
	if err != nil {
		return fmt.Errorf("record the feedback not taken on %s: %w", pr.URL, err)
	}
	if n > 0 {
		log := logger(ctx, pr.ObjectiveID, "")
		for _, f := range refused {
			log.Warn("pull request feedback not taken: its author may not steer an agent", "url", pr.URL,
				"feedback_id", f.FeedbackID, "author", f.Author, "why", f.TrustReason)
		}
	}
	return nil
}

// forgeOf is the forge of o's repository, or a permanent error.
func (a *PullRequests) forgeOf(o *domain.Objective) (*ForgeTarget, error) {
	if a.Forges == nil {
		return nil, forgeMissing(o.Repository, nil)
	}
	t, err := a.Forges.Open(o.Repository)
	if err != nil || t == nil {
		return nil, forgeMissing(o.Repository, err)
	}
	return t, nil
}

// pullRequestMerged records the merge: the objective is confirmed. The
// head stays the commit azolla pushed, whatever else was pushed since.
func (a *PullRequests) pullRequestMerged(ctx context.Context, pr *domain.PullRequest,
	res SyncPullRequestResult) (SyncPullRequestResult, error) {
	_, changed, err := a.Store.UpdatePullRequestState(ctx, store.UpdatePullRequestStateParams{
		ObjectiveID: pr.ObjectiveID, State: domain.PullRequestMerged, Now: a.now()})
	if err != nil {
		return res, fmt.Errorf("record the merge of %s: %w", pr.URL, err)
	}
	if changed {
		a.observePullRequest(PullRequestMerged)
	}
	logger(ctx, pr.ObjectiveID, pr.WorkOrderID).Info("pull request merged: objective confirmed", "url", pr.URL)
	res.State = domain.PullRequestMerged
	return res, nil
}

// pullRequestClosed records a close without merge and hands the objective
// back to a human.
func (a *PullRequests) pullRequestClosed(ctx context.Context, o *domain.Objective, pr *domain.PullRequest,
	res SyncPullRequestResult) (SyncPullRequestResult, error) {
	_, changed, err := a.Store.UpdatePullRequestState(ctx, store.UpdatePullRequestStateParams{
		ObjectiveID: pr.ObjectiveID, State: domain.PullRequestClosed, Now: a.now()})
	if err != nil {
		return res, fmt.Errorf("record the close of %s: %w", pr.URL, err)
	}
	if changed {
		a.observePullRequest(PullRequestClosed)
	}
	ps := pause.PullRequestClosed(o.ObjectiveID, o.StatusSeq, pr.WorkOrderID, pr.URL, a.now())
	if _, _, err := a.Store.CreatePauseStateOnce(ctx, &ps); err != nil {
		return res, fmt.Errorf("pause on the close of %s: %w", pr.URL, err)
	}
	res.State, res.Pause = domain.PullRequestClosed, &ps
	return res, nil
}

// revise starts the next round: in one transaction the feedback is taken
// (the cursor moves from where it was read), the objective goes DONE ->
// TODO and its TICKET_READY carries the feedback. A retry of a committed
// revise finds its own event and returns it.
func (a *PullRequests) revise(ctx context.Context, o *domain.Objective, pr *domain.PullRequest, fb feedback,
	in SyncPullRequestInput, res SyncPullRequestResult) (SyncPullRequestResult, error) {
	if _, err := budget.Left(ctx, a.Store, o); err != nil {
		return a.budgetSpent(ctx, o, in, res, err)
	}
	comment := strings.TrimSpace(strings.TrimSpace(in.Comment) + "\n\n" + fb.text(pr))
	by := in.By
	if by == "" {
		by = "forge review (auto_revise)"
	}
	err := a.Store.InTx(ctx, func(q store.Querier) error {
		if _, err := q.AdvancePullRequestCursor(ctx, store.AdvancePullRequestCursorParams{
			ObjectiveID: o.ObjectiveID, From: pr.ReviewCursor, To: string(fb.cursor), ChecksSHA: fb.checksSHA,
			NewRound: true, Now: a.now()}); err != nil {
			return err
		}
		cur, err := q.TransitionObjective(ctx, transition.Revise.Params(o.ObjectiveID, a.now()))
		if err != nil {
			return err
		}
		ev, _, err := q.EmitEvent(ctx, &domain.Event{EventID: eventID(cur.ObjectiveID, cur.StatusSeq),
			EventType: domain.EventTicketReady, SubjectID: cur.ObjectiveID, TransitionSeq: cur.StatusSeq,
			DecidedBy: truncate(textsafe.Line(by), maxDecidedBy), Comment: truncate(comment, maxFeedback),
			CreatedAt: a.now()})
		if err != nil {
			return err
		}
		if taken := fb.taken(pr, ev.EventID, a.now()); len(taken) > 0 {
			if _, err := q.RecordPullRequestFeedback(ctx, taken); err != nil {
				return err
			}
		}
		res.Revised = &ReadyResult{EventID: ev.EventID, Status: cur.Status, StatusSeq: cur.StatusSeq}
		return nil
	})
	if errors.Is(err, domain.ErrPullRequestStale) {
		// Taken already: by this step's earlier attempt, or another.
		return a.revisedAlready(ctx, o.ObjectiveID, res)
	}
	if err != nil {
		return res, permanent(fmt.Errorf("start the next round on %s: %w", pr.URL, err))
	}
	res.Waiting = ""
	a.observePullRequest(PullRequestRevised)
	logger(ctx, o.ObjectiveID, "").Info("pull request feedback taken: next round", "url", pr.URL,
		"event_id", res.Revised.EventID, "by", by)
	return res, nil
}

// revisedAlready returns the round a committed revise started, if the
// objective is in it.
func (a *PullRequests) revisedAlready(ctx context.Context, objectiveID string, res SyncPullRequestResult) (SyncPullRequestResult, error) {
	o, err := a.Store.GetObjective(ctx, objectiveID)
	if err != nil {
		return res, err
	}
	if o.Status != domain.StatusTodo {
		res.Waiting = ""
		return res, nil
	}
	ev, err := pendingEvent(ctx, a.Store, o)
	if err != nil || ev == nil {
		return res, err
	}
	res.Waiting, res.Revised = "", &ReadyResult{EventID: ev.EventID, Status: o.Status, StatusSeq: o.StatusSeq}
	return res, nil
}

// feedback is what the forge holds for azolla since the last round.
type feedback struct {
	// reviews are those of trusted authors, each with the line comments of
	// trusted authors; only they are taken.
	reviews []trustedReview
	// refused are the reviews and line comments of authors who may not
	// steer an agent: recorded, shown, never taken.
	refused []*domain.PullRequestFeedback
	cursor  forge.Cursor
	// failed are the failed checks on checksSHA, azolla's head; empty
	// checksSHA when there are none to take. Posting a commit status needs
	// write access on every forge, so a check is a trusted word.
	failed    []forge.Check
	checksSHA string
}

// trustedReview is a review whose author may steer an agent, and why;
// commentReasons say why for the line comments kept whose author is not
// the review's, by comment id.
type trustedReview struct {
	forge.Review
	reason         string
	commentReasons map[string]string
}

// readFeedback reads the reviews after the stored cursor, judges their
// authors by the repository's trust rule (docs/security.md#the-forge) and,
// when the pull request's head is still azolla's commit and its failures
// were not taken yet, its failed checks. The pull request's own author,
// azolla's account, is not a reviewer: what it wrote is neither taken nor
// recorded.
func readFeedback(ctx context.Context, target *ForgeTarget, pr *domain.PullRequest, fpr forge.PullRequest,
	now time.Time) (feedback, error) {
	f := target.Forge
	reviews, cur, err := f.Reviews(ctx, pr.Number, forge.Cursor(pr.ReviewCursor))
	if err != nil {
		return feedback{}, err
	}
	fb := feedback{cursor: cur}
	self := func(user string) bool { return fpr.Author != "" && strings.EqualFold(user, fpr.Author) }
	for _, r := range reviews {
		if self(r.Author) {
			continue
		}
		v, err := target.Trust.Check(ctx, r.Author)
		if err != nil {
			return feedback{}, err
		}
		if !v.Trusted {
			fb.refused = append(fb.refused, judged(pr, "review-"+r.ID, domain.FeedbackReview, r.Author,
				string(r.State), r.Body, v, now))
			continue
		}
		kept := trustedReview{Review: r, reason: v.Reason}
		kept.Comments = nil
		for _, c := range r.Comments {
			if c.Author != "" && !strings.EqualFold(c.Author, r.Author) {
				if self(c.Author) {
					continue
				}
				cv, err := target.Trust.Check(ctx, c.Author)
				if err != nil {
					return feedback{}, err
				}
				if !cv.Trusted {
					fb.refused = append(fb.refused, judged(pr, "comment-"+c.ID, domain.FeedbackLineComment, c.Author,
						"", c.Body, cv, now))
					continue
				}
				if kept.commentReasons == nil {
					kept.commentReasons = map[string]string{}
				}
				kept.commentReasons[c.ID] = cv.Reason
			}
			kept.Comments = append(kept.Comments, c)
		}
		fb.reviews = append(fb.reviews, kept)
	}
	if fpr.HeadSHA == pr.HeadSHA && pr.ChecksSHA != pr.HeadSHA {
		c, err := f.Checks(ctx, pr.HeadSHA)
		if err != nil {
			return feedback{}, err
		}
		if c.State == forge.ChecksFailure {
			fb.failed, fb.checksSHA = c.Failed(), pr.HeadSHA
		}
	}
	return fb, nil
}

// judged is the record of one piece of feedback and the verdict on its
// author.
func judged(pr *domain.PullRequest, id string, kind domain.FeedbackKind, author, state, body string, v forge.Verdict,
	now time.Time) *domain.PullRequestFeedback {
	return &domain.PullRequestFeedback{ObjectiveID: pr.ObjectiveID, Number: pr.Number, FeedbackID: id, Kind: kind,
		Author: truncate(cmp.Or(textsafe.Line(strings.TrimSpace(author)), "(no author)"), maxFeedbackAuthor),
		State:  state, Summary: domain.FeedbackSummary(body), Trusted: v.Trusted,
		TrustReason: truncate(textsafe.Line(v.Reason), maxTrustReason), CreatedAt: now}
}

// Bounds of a feedback record's fields (the schema's).
const (
	maxFeedbackAuthor = 255
	maxTrustReason    = 400
)

// taken is the record of each trusted review (and trusted line comment by
// another author) a round takes, naming the round's event.
func (fb feedback) taken(pr *domain.PullRequest, eventID string, now time.Time) []*domain.PullRequestFeedback {
	var out []*domain.PullRequestFeedback
	for _, r := range fb.reviews {
		rec := judged(pr, "review-"+r.ID, domain.FeedbackReview, r.Author, string(r.State), r.Body,
			forge.Verdict{User: r.Author, Trusted: true, Reason: r.reason}, now)
		rec.TakenBy = eventID
		out = append(out, rec)
		for _, c := range r.Comments {
			if why, ok := r.commentReasons[c.ID]; ok {
				rec := judged(pr, "comment-"+c.ID, domain.FeedbackLineComment, c.Author, "", c.Body,
					forge.Verdict{User: c.Author, Trusted: true, Reason: why}, now)
				rec.TakenBy = eventID
				out = append(out, rec)
			}
		}
	}
	return out
}

// asksForChanges: a review requested changes or a check failed.
func (fb feedback) asksForChanges() bool {
	if len(fb.failed) > 0 {
		return true
	}
	for _, r := range fb.reviews {
		if r.State == forge.ReviewChangesRequested {
			return true
		}
	}
	return false
}

// summary is one line for the inbox; "" when nothing asks for changes.
func (fb feedback) summary() string {
	if !fb.asksForChanges() {
		return ""
	}
	var parts []string
	for _, r := range fb.reviews {
		if r.State == forge.ReviewChangesRequested {
			parts = append(parts, fmt.Sprintf("%s requested changes (%d comments)", r.Author, len(r.Comments)))
		}
	}
	for _, c := range fb.failed {
		parts = append(parts, "check "+c.Name+" failed")
	}
	return strings.Join(parts, "; ")
}

// text is the feedback as the next run reads it: every review since the
// last round with its line comments (file:line), then the failed checks.
func (fb feedback) text(pr *domain.PullRequest) string {
	var s strings.Builder
	if len(fb.reviews) > 0 {
		fmt.Fprintf(&s, "Review of pull request %s (round %d):\n", pr.URL, pr.Rounds)
	}
	for _, r := range fb.reviews {
		fmt.Fprintf(&s, "- %s %s", r.Author, strings.ReplaceAll(string(r.State), "_", " "))
		if b := strings.TrimSpace(r.Body); b != "" {
			fmt.Fprintf(&s, ": %s", b)
		}
		s.WriteString("\n")
		for _, c := range r.Comments {
			line := c.Line
			if line == 0 {
				line = c.OldLine
			}
			fmt.Fprintf(&s, "  - %s:%d: %s\n", c.Path, line, strings.TrimSpace(c.Body))
		}
	}
	if len(fb.failed) > 0 {
		fmt.Fprintf(&s, "Failed checks on %s:\n", fb.checksSHA)
		for _, c := range fb.failed {
			fmt.Fprintf(&s, "- %s: %s", c.Name, strings.TrimSpace(c.Description))
			if c.URL != "" {
				fmt.Fprintf(&s, " (%s)", c.URL)
			}
			s.WriteString("\n")
		}
	}
	return s.String()
}

// forgeMissing is the permanent error of a repository without a usable
// forge.
func forgeMissing(repository string, err error) error {
	msg := "no forge is configured for " + repository
	if err != nil {
		msg = fmt.Sprintf("forge of %s: %v", repository, err)
	}
	return permanentForge(msg, err)
}

// budgetSpent answers a round asked for once the objective's budget is
// spent: a human's ask is refused with why; review feedback pauses the
// objective for a human to raise the budget.
func (a *PullRequests) budgetSpent(ctx context.Context, o *domain.Objective, in SyncPullRequestInput,
	res SyncPullRequestResult, err error) (SyncPullRequestResult, error) {
	var spent *budget.SpentError
	if !errors.As(err, &spent) {
		return res, err
	}
	if in.Revise {
		return res, permanent(err)
	}
	ps := pause.BudgetSpent(o.ObjectiveID, o.StatusSeq, "", "", spent.Standing, nil, nil, a.now())
	if _, _, err := a.Store.CreatePauseStateOnce(ctx, &ps); err != nil {
		return res, fmt.Errorf("pause on the spent budget: %w", err)
	}
	res.Pause = &ps
	return res, nil
}
