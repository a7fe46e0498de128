package audit

import (
	"context"
	"fmt"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/schemas"
)

// pullRequestPage is how many pull requests one ListPullRequests call reads.
const pullRequestPage = 500

// pullRequestReader is what loadPullRequests reads: the pull requests and
// their feedback.
type pullRequestReader interface {
	store.PullRequestQuerier
	store.PullRequestFeedbackQuerier
}

// loadPullRequests reads every pull request, in pages.
func (s *state) loadPullRequests(ctx context.Context, q pullRequestReader) error {
	for after := (domain.Cursor{}); ; {
		page, err := q.ListPullRequests(ctx, store.ListPullRequestsParams{After: after, Limit: pullRequestPage})
		if err != nil {
			return err
		}
		s.pullRequests = append(s.pullRequests, page...)
		for _, p := range page {
			fb, err := q.ListPullRequestFeedback(ctx, p.ObjectiveID)
			if err != nil {
				return err
			}
			s.feedback = append(s.feedback, fb...)
		}
		if len(page) < pullRequestPage {
			return nil
		}
		last := page[len(page)-1]
		after = domain.Cursor{CreatedAt: last.CreatedAt, ID: last.ObjectiveID}
	}
}

// pullRequestSchema: every pull request row is a valid pull_request, its
// head the objective's branch; the schema has a MERGED one carry merged_at
// and a CLOSED one closed_at.
func pullRequestSchema(s *state, r recorder) {
	for _, p := range s.pullRequests {
		r.checked(1)
		err := schemas.Validate(schemas.PullRequest, p)
		if err == nil {
			err = p.CheckHeadBranch()
		}
		if err != nil {
			r.violation(pullRequestResource(p), "%v", err)
		}
	}
}

// pullRequestOfPassedWorkOrder: a pull request is opened, adopted or
// pushed to only after a gate PASS, so its objective exists, its
// workorder is one of that objective's with a PASS run_record, and the
// head recorded is the commit that PASS was for (what azolla pushed).
func pullRequestOfPassedWorkOrder(s *state, r recorder) {
	objectives := make(map[string]bool, len(s.objectives))
	for _, o := range s.objectives {
		objectives[o.ObjectiveID] = true
	}
	for _, p := range s.pullRequests {
		r.checked(1)
		res := pullRequestResource(p)
		if !objectives[p.ObjectiveID] {
			r.violation(res, "its objective %s does not exist", p.ObjectiveID)
		}
		w := s.workOrder[p.WorkOrderID]
		switch {
		case w == nil:
			r.violation(res, "its workorder %s does not exist", p.WorkOrderID)
		case w.ObjectiveID != p.ObjectiveID:
			r.violation(res, "its workorder %s is of objective %q", w.WorkOrderID, w.ObjectiveID)
		case s.runRecord[w.WorkOrderID] == nil || s.runRecord[w.WorkOrderID].GateResult != domain.GatePass:
			r.violation(res, "its workorder %s has no %s run_record", w.WorkOrderID, domain.GatePass)
		case s.runRecord[w.WorkOrderID].CommitSHA != p.HeadSHA:
			r.violation(res, "its recorded head %s is not the commit its workorder %s passed with (%s)",
				p.HeadSHA, w.WorkOrderID, s.runRecord[w.WorkOrderID].CommitSHA)
		}
	}
}

func pullRequestResource(p *domain.PullRequest) string { return "pull_request " + p.ObjectiveID }

// feedbackTakenFromTrusted: only people who may steer an agent on the
// repository started a round with their words. Every feedback record is a
// valid pull_request_feedback; one a round took is of a trusted author,
// with why, and names that round's TICKET_READY event of its own
// objective.
func feedbackTakenFromTrusted(s *state, r recorder) {
	for _, f := range s.feedback {
		r.checked(1)
		res := fmt.Sprintf("pull_request_feedback %s #%d %s", f.ObjectiveID, f.Number, f.FeedbackID)
		if err := schemas.Validate(schemas.PullRequestFeedback, f); err != nil {
			r.violation(res, "%v", err)
			continue
		}
		if f.TakenBy == "" {
			continue
		}
		switch ev := s.event[f.TakenBy]; {
		case ev == nil:
			r.violation(res, "the round that took it, event %s, does not exist", f.TakenBy)
		case ev.EventType != domain.EventTicketReady || ev.SubjectID != f.ObjectiveID:
			r.violation(res, "it was taken by event %s, a %s of %q, not a TICKET_READY of its objective",
				ev.EventID, ev.EventType, ev.SubjectID)
		}
	}
}
