package github

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	gh "github.com/google/go-github/v89/github"

	"github.com/azolla/azolla/internal/forge"
)

// Checks implements forge.Forge: the commit's statuses and its check runs,
// each the latest of its name.
func (f *Forge) Checks(ctx context.Context, sha string) (forge.Checks, error) {
	statuses, err := collect(ctx, f, func(ctx context.Context, page int) ([]*gh.RepoStatus, *gh.Response, error) {
		combined, resp, err := f.client.Repositories.GetCombinedStatus(ctx, f.owner, f.repo, sha,
			&gh.ListOptions{PerPage: f.pageSize, Page: page})
		return combined.GetStatuses(), resp, err
	})
	if err != nil {
		return forge.Checks{}, fmt.Errorf("github: reading the statuses of %s: %w", sha, err)
	}
	latest := "latest"
	runs, err := collect(ctx, f, func(ctx context.Context, page int) ([]*gh.CheckRun, *gh.Response, error) {
		res, resp, err := f.client.Checks.ListCheckRunsForRef(ctx, f.owner, f.repo, sha, &gh.ListCheckRunsOptions{
			Filter: &latest, ListOptions: gh.ListOptions{PerPage: f.pageSize, Page: page}})
		return res.GetCheckRuns(), resp, err
	})
	if err != nil {
		return forge.Checks{}, fmt.Errorf("github: reading the check runs of %s: %w", sha, err)
	}

	var checks []forge.Check
	for _, s := range latestBy(statuses, (*gh.RepoStatus).GetContext, (*gh.RepoStatus).GetID) {
		checks = append(checks, forge.Check{
			Name:        s.GetContext(),
			State:       statusState(s.GetState()),
			Description: s.GetDescription(),
			URL:         s.GetTargetURL(),
		})
	}
	for _, r := range latestBy(runs, (*gh.CheckRun).GetName, (*gh.CheckRun).GetID) {
		checks = append(checks, checkRun(r))
	}
	return forge.Checks{SHA: sha, State: forge.Combine(checks), Checks: checks}, nil
}

// latestBy keeps, of the items sharing a name, the one with the highest id
// (GitHub's ids grow), ordered by name.
func latestBy[T any](items []T, name func(T) string, id func(T) int64) []T {
	byName := make(map[string]T)
	for _, it := range items {
		if old, ok := byName[name(it)]; !ok || id(it) > id(old) {
			byName[name(it)] = it
		}
	}
	out := make([]T, 0, len(byName))
	for _, it := range byName {
		out = append(out, it)
	}
	slices.SortFunc(out, func(a, b T) int { return cmp.Compare(name(a), name(b)) })
	return out
}

// statusState maps a commit status: error and failure both fail.
func statusState(s string) forge.CheckState {
	switch s {
	case "success":
		return forge.ChecksSuccess
	case "pending":
		return forge.ChecksPending
	default:
		return forge.ChecksFailure
	}
}

// checkRun maps a check run. A conclusion this code does not know fails:
// azolla never merges on a verdict it cannot read.
func checkRun(r *gh.CheckRun) forge.Check {
	c := forge.Check{Name: r.GetName(), URL: cmp.Or(r.GetDetailsURL(), r.GetHTMLURL())}
	switch {
	case r.GetStatus() != "completed":
		c.State = forge.ChecksPending
	case slices.Contains([]string{"success", "neutral", "skipped"}, r.GetConclusion()):
		c.State = forge.ChecksSuccess
	default:
		c.State = forge.ChecksFailure
	}
	c.Description = r.GetOutput().GetTitle()
	if c.Description == "" {
		c.Description = cmp.Or(r.GetConclusion(), r.GetStatus())
	}
	return c
}
