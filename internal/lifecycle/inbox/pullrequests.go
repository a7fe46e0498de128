package inbox

import (
	"context"
	"errors"
	"fmt"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// pullRequests are the open pull requests, each waiting for a review, and
// the DONE objectives whose pull request was closed without merge or ran
// out of rounds (their latest pause).
func (src Source) pullRequests(ctx context.Context, latest map[string]*domain.PauseState) ([]Item, error) {
	var out []Item
	// open are the objectives with an open pull request: none of them
	// waits for one to be opened.
	open := map[string]bool{}
	list := func(after domain.Cursor) ([]*domain.PullRequest, error) {
		return src.Store.ListPullRequests(ctx, store.ListPullRequestsParams{After: after, Limit: pageSize,
			States: []domain.PullRequestState{domain.PullRequestOpen}})
	}
	cursor := func(p *domain.PullRequest) domain.Cursor {
		return domain.Cursor{CreatedAt: p.CreatedAt, ID: p.ObjectiveID}
	}
	for pr, err := range pages(list, cursor) {
		if err != nil {
			return nil, err
		}
		open[pr.ObjectiveID] = true
		o, err := src.Store.GetObjective(ctx, pr.ObjectiveID)
		if err != nil {
			return nil, err
		}
		if ps := latest[o.ObjectiveID]; ps != nil && (ps.Reason == domain.PauseRevisionLimit || ps.Reason == domain.PauseClosedOnForge) {
			out = append(out, src.pauseItem(KindPullRequest, o, ps))
			continue
		}
		if o.Status != domain.StatusDone {
			continue // its next round runs
		}
		id := o.ObjectiveID
		fb, err := src.Store.ListPullRequestFeedback(ctx, id)
		if err != nil {
			return nil, err
		}
		var refused []string
		for _, f := range NotTaken(fb, pr.Number) {
			refused = append(refused, NotTakenLine(f))
		}
		out = append(out, Item{Kind: KindPullRequest, Urgency: o.Urgency, SubjectType: domain.SubjectObjective,
			SubjectID: id, Title: o.Title, Reason: "review " + pr.URL, Since: pr.UpdatedAt, NotTaken: refused,
			Actions: []Action{
				{Text: fmt.Sprintf("review pull request #%d (round %d)", pr.Number, pr.Rounds), Command: pr.URL},
				{Text: "ask for another round with its review", Command: src.Self + " objective retry " + id +
					` --comment "what to change"`},
				{Text: "read it now rather than at the next poll", Command: src.Self + " pr sync " + id},
			}})
	}
	for id, ps := range latest {
		switch {
		case ps.Reason == domain.PausePullRequestClosed || (ps.Reason == domain.PauseClosedOnForge && !open[id]):
			o, err := src.Store.GetObjective(ctx, id)
			if err != nil {
				return nil, err
			}
			if o.Status == domain.StatusDone {
				out = append(out, src.pauseItem(KindPullRequest, o, ps))
			}
		case ps.Reason == domain.PauseRunComplete && src.HasForge != nil && !open[id] && src.Now.Sub(ps.CreatedAt) < pendingWindow:
			it, err := src.pendingPullRequest(ctx, id, ps)
			if err != nil {
				return nil, err
			}
			if it != nil {
				out = append(out, *it)
			}
		}
	}
	return out, nil
}

// pendingPullRequest is the item of a recent PASS on a repository with a
// forge whose pull request is not recorded yet (the forge is down, or
// refused: objective show says which); nil when there is none to wait for.
func (src Source) pendingPullRequest(ctx context.Context, id string, ps *domain.PauseState) (*Item, error) {
	o, err := src.Store.GetObjective(ctx, id)
	if err != nil {
		return nil, err
	}
	if o.Status != domain.StatusDone || !src.HasForge(o.Repository) {
		return nil, nil
	}
	if _, err := src.Store.GetPullRequest(ctx, id); err == nil || !errors.Is(err, domain.ErrNotFound) {
		return nil, err
	}
	return &Item{Kind: KindPullRequest, Urgency: o.Urgency, SubjectType: domain.SubjectObjective, SubjectID: id,
		Title: o.Title, Reason: "pull request pending", Since: ps.CreatedAt, Actions: []Action{
			{Text: "its pull request is not open yet: see why", Command: src.Self + " objective show " + id},
		}}, nil
}
