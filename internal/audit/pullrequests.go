package audit

import (
	"context"

	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/schemas"
)

// pullRequestPage is how many pull requests one ListPullRequests call reads.
const pullRequestPage = 500

// loadPullRequests reads every pull request, in pages.
func (s *state) loadPullRequests(ctx context.Context, q store.Querier) error {
	for after := (store.Cursor{}); ; {
		page, err := q.ListPullRequests(ctx, store.ListPullRequestsParams{After: after, Limit: pullRequestPage})
		if err != nil {
			return err
		}
		s.pullRequests = append(s.pullRequests, page...)
		if len(page) < pullRequestPage {
			return nil
		}
		last := page[len(page)-1]
		after = store.Cursor{CreatedAt: last.CreatedAt, ID: last.ObjectiveID}
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
		case s.runRecord[w.WorkOrderID] == nil || s.runRecord[w.WorkOrderID].GateResult != store.GatePass:
			r.violation(res, "its workorder %s has no %s run_record", w.WorkOrderID, store.GatePass)
		case s.runRecord[w.WorkOrderID].CommitSHA != p.HeadSHA:
			r.violation(res, "its recorded head %s is not the commit its workorder %s passed with (%s)",
				p.HeadSHA, w.WorkOrderID, s.runRecord[w.WorkOrderID].CommitSHA)
		}
	}
}

func pullRequestResource(p *store.PullRequest) string { return "pull_request " + p.ObjectiveID }
