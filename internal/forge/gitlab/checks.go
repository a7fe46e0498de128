package gitlab

import (
	"cmp"
	"context"
	"slices"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/azolla/azolla/internal/forge"
)

func (p *project) Checks(ctx context.Context, sha string) (forge.Checks, error) {
	all := true
	statuses, err := list(ctx, p, "read the statuses of commit "+sha, func(lo gl.ListOptions, o ...gl.RequestOptionFunc) ([]*gl.CommitStatus, *gl.Response, error) {
		return p.api.Commits.GetCommitStatuses(p.path, sha, &gl.GetCommitStatusesOptions{ListOptions: lo, All: &all}, o...)
	})
	if err != nil {
		return forge.Checks{}, err
	}
	latest := map[string]*gl.CommitStatus{}
	for _, s := range statuses {
		if l, ok := latest[s.Name]; !ok || s.ID > l.ID {
			latest[s.Name] = s
		}
	}
	checks := make([]forge.Check, 0, len(latest))
	for _, s := range latest {
		state, note := checkState(s.Status, s.AllowFailure)
		description := s.Description
		if description == "" {
			description = note
		}
		checks = append(checks, forge.Check{Name: s.Name, State: state, Description: description, URL: s.TargetURL})
	}
	slices.SortFunc(checks, func(a, b forge.Check) int { return cmp.Compare(a.Name, b.Name) })
	return forge.Checks{SHA: sha, State: forge.Combine(checks), Checks: checks}, nil
}

// checkState maps a commit status by the rules in doc.go, with the words a
// check without a description of its own is described by.
func checkState(status string, allowFailure bool) (forge.CheckState, string) {
	switch status {
	case "success":
		return forge.ChecksSuccess, "passed"
	case "skipped":
		return forge.ChecksSuccess, "skipped"
	case "failed":
		if allowFailure {
			return forge.ChecksSuccess, "failed, allowed to fail"
		}
		return forge.ChecksFailure, "failed"
	case "canceled":
		return forge.ChecksFailure, "canceled"
	case "manual":
		if allowFailure {
			return forge.ChecksSuccess, "manual, not started, allowed to fail"
		}
		return forge.ChecksPending, "manual, waiting to be started"
	default: // created, pending, running, preparing, scheduled, waiting_for_resource, …
		return forge.ChecksPending, status
	}
}
