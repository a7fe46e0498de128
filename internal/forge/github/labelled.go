package github

import (
	"context"
	"fmt"
	"strings"
	"time"

	gh "github.com/google/go-github/v89/github"
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
	var user string
	var at time.Time
	for _, e := range events {
		if e.Label == nil || !strings.EqualFold(e.Label.GetName(), label) {
			continue
		}
		switch e.GetEvent() {
		case "labeled":
			user, at = e.GetActor().GetLogin(), e.GetCreatedAt().Time
		case "unlabeled":
			user, at = "", time.Time{}
		}
	}
	return user, at, nil
}
