package manifest

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/textsafe"
)

// Pull request states as the store records them (store.PullRequestState).
const (
	prOpen   = "OPEN"
	prMerged = "MERGED"
	prClosed = "CLOSED"
)

// settledAt is when a merged or closed pull request was settled: merged_at
// or closed_at, else its last update (a row that lacks the stamp still
// counts once).
func (p PullRequestRow) settledAt() time.Time {
	switch {
	case p.State == prMerged && p.MergedAt != nil:
		return *p.MergedAt
	case p.State == prClosed && p.ClosedAt != nil:
		return *p.ClosedAt
	}
	return p.UpdatedAt
}

// pullRequestSections writes the pull requests waiting for review (every
// OPEN one, most urgent objective first, then the longest untouched) and
// those merged or closed in the period (newest first), and returns the
// waiting ones in their order. since says whether a time is in the period.
func pullRequestSections(b *strings.Builder, rs rows, since func(time.Time) bool) []PullRequestRow {
	var waiting, settled []PullRequestRow
	for _, p := range rs.prs {
		switch {
		case p.State == prOpen:
			waiting = append(waiting, p)
		case (p.State == prMerged || p.State == prClosed) && since(p.settledAt()):
			settled = append(settled, p)
		}
	}
	tie := func(a, b PullRequestRow) int {
		return cmp.Or(strings.Compare(a.ObjectiveID, b.ObjectiveID), cmp.Compare(a.Number, b.Number), strings.Compare(a.URL, b.URL))
	}
	slices.SortFunc(waiting, func(a, b PullRequestRow) int {
		return cmp.Or(cmp.Compare(rank(rs.objectives[a.ObjectiveID].Urgency), rank(rs.objectives[b.ObjectiveID].Urgency)),
			a.UpdatedAt.Compare(b.UpdatedAt), tie(a, b))
	})
	section(b, "Pull requests waiting for review", waiting, func(p PullRequestRow) string {
		return fmt.Sprintf("objective `%s`: %s (round %d), updated %s", textsafe.Line(p.ObjectiveID), md(p.URL, maxURLRunes), p.Rounds, stamp(p.UpdatedAt))
	})
	slices.SortFunc(settled, func(a, b PullRequestRow) int {
		return cmp.Or(b.settledAt().Compare(a.settledAt()), tie(a, b))
	})
	section(b, "Pull requests merged or closed since the last manifest", settled, func(p PullRequestRow) string {
		how := "merged"
		if p.State == prClosed {
			how = "closed without merge"
		}
		return fmt.Sprintf("objective `%s`: %s %s %s (round %d)", textsafe.Line(p.ObjectiveID), md(p.URL, maxURLRunes), how, stamp(p.settledAt()), p.Rounds)
	})
	return waiting
}

// reviewAction is the top action of an OPEN pull request: a human's review
// is what it waits for.
func reviewAction(p PullRequestRow, urgency int) action {
	return action{urgency, actReview, p.UpdatedAt, p.ObjectiveID,
		fmt.Sprintf("Review pull request %s of %s", line(p.URL, maxURLRunes), line(p.ObjectiveID, 64))}
}
