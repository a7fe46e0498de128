package gitea

import (
	"cmp"
	"context"
	"net/url"
	"slices"

	"github.com/azolla/azolla/internal/forge"
)

type statusJSON struct {
	ID          int64  `json:"id"`
	Context     string `json:"context"`
	Status      string `json:"status"`
	Description string `json:"description"`
	TargetURL   string `json:"target_url"`
}

// checkStates maps Gitea's commit status states to the seam's; an unknown
// state counts as not done.
var checkStates = map[string]forge.CheckState{
	"success": forge.ChecksSuccess,
	"skipped": forge.ChecksSuccess,
	"pending": forge.ChecksPending,
	"error":   forge.ChecksFailure,
	"failure": forge.ChecksFailure,
	"warning": forge.ChecksFailure,
}

// Checks returns the latest status of each context on sha, combined, by
// name.
//
// It reads every status of the commit rather than Gitea's combined
// status: that one's total_count is not the number of contexts (so its
// pages cannot be counted), and its order moves a context to the top
// each time it is updated, so a page read while CI posts could skip one.
// Every status, in the order they were posted (sort=highestindex is
// ascending, despite its name), only grows at the end; the latest of a
// context is the one with the highest id.
func (f *Forge) Checks(ctx context.Context, sha string) (forge.Checks, error) {
	latest := map[string]statusJSON{}
	path := f.repoPath + "/commits/" + url.PathEscape(sha) + "/statuses"
	err := list(ctx, f, path, url.Values{"sort": {"highestindex"}}, func(page []statusJSON) error {
		for _, s := range page {
			if cur, ok := latest[s.Context]; !ok || s.ID > cur.ID {
				latest[s.Context] = s
			}
		}
		return nil
	})
	if err != nil {
		return forge.Checks{}, err
	}
	out := forge.Checks{SHA: sha}
	for _, s := range latest {
		state, ok := checkStates[s.Status]
		if !ok {
			state = forge.ChecksPending
		}
		out.Checks = append(out.Checks, forge.Check{Name: s.Context, State: state, Description: s.Description,
			URL: s.TargetURL})
	}
	slices.SortFunc(out.Checks, func(a, b forge.Check) int { return cmp.Compare(a.Name, b.Name) })
	out.State = forge.Combine(out.Checks)
	return out, nil
}
