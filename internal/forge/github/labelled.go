package github

import (
	"context"
	"fmt"
	"time"

	gh "github.com/google/go-github/v89/github"

	"github.com/azolla/azolla/internal/forge"
)

// LabelledBy implements forge.Forge from the issue's events, which GitHub
// lists oldest first: the last "labeled" of the label wins, and an
// "unlabeled" after it leaves no one.
func (f *Forge) LabelledBy(ctx context.Context, number int, label string) (string, time.Time, error) {
	events, err := collect(ctx, f, func(ctx context.Context, page int) ([]*gh.IssueEvent, *gh.Response, error) {
		return f.client.Issues.ListIssueEvents(ctx, f.owner, f.repo, number,
			&gh.ListOptions{PerPage: f.pageSize, Page: page})
	})
	if err != nil {
		return "", time.Time{}, fmt.Errorf("github: reading the events of issue #%d: %w", number, err)
	}
	var labels []forge.LabelEvent
	for _, e := range events {
		if e.Label != nil && (e.GetEvent() == "labeled" || e.GetEvent() == "unlabeled") {
			labels = append(labels, forge.LabelEvent{Label: e.Label.GetName(), Added: e.GetEvent() == "labeled",
				User: e.GetActor().GetLogin(), At: e.GetCreatedAt().Time})
		}
	}
	user, at := forge.LastLabelled(labels, label)
	return user, at, nil
}
