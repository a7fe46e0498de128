package gitlab

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/azolla/azolla/internal/forge"
)

// alreadyOpen is the start of the message of GitLab's 409 to a create
// while an open merge request from the same source branch exists.
const alreadyOpen = "Another open merge request already exists for this source branch"

// draftTitle is the prefix OpenOrAdopt and Update mark drafts with.
const draftTitle = "Draft: "

// draftPrefix matches the title prefixes GitLab reads as "draft".
var draftPrefix = regexp.MustCompile(`(?i)^\s*(\[draft\]|\(draft\)|draft:)\s*`)

func (p *project) OpenOrAdopt(ctx context.Context, np forge.NewPullRequest) (forge.PullRequest, bool, error) {
	if pr, ok, err := p.findOpen(ctx, np.Head, np.Base); err != nil || ok {
		return pr, false, err
	}
	opt, err := p.createOptions(ctx, np)
	if err != nil {
		return forge.PullRequest{}, false, err
	}
	mr, err := call(ctx, p, "create a merge request from "+np.Head, func(o ...gl.RequestOptionFunc) (*gl.MergeRequest, *gl.Response, error) {
		return p.api.MergeRequests.CreateMergeRequest(p.path, opt, o...)
	})
	if err == nil {
		return pullRequest(&mr.BasicMergeRequest), true, nil
	}
	if !lostCreateRace(err) {
		return forge.PullRequest{}, false, err
	}
	pr, ok, ferr := p.findOpen(ctx, np.Head, np.Base)
	if ferr != nil {
		return forge.PullRequest{}, false, ferr
	}
	if !ok {
		return forge.PullRequest{}, false, fmt.Errorf("gitlab: an open merge request from %s exists, but not onto %s: %w", np.Head, np.Base, err)
	}
	return pr, false, nil
}

// lostCreateRace says whether a create was refused because an open merge
// request from its source branch exists.
func lostCreateRace(err error) bool {
	var e *gl.ErrorResponse
	return errors.As(err, &e) && e.HasStatusCode(http.StatusConflict) && strings.Contains(e.Message, alreadyOpen)
}

// findOpen returns the opened merge request from head onto base within the
// project (not from a fork), the one with the lowest iid if there are
// several.
func (p *project) findOpen(ctx context.Context, head, base string) (forge.PullRequest, bool, error) {
	opened := "opened"
	mrs, err := list(ctx, p, "list merge requests from "+head, func(lo gl.ListOptions, o ...gl.RequestOptionFunc) ([]*gl.BasicMergeRequest, *gl.Response, error) {
		return p.api.MergeRequests.ListProjectMergeRequests(p.path, &gl.ListProjectMergeRequestsOptions{
			ListOptions: lo, State: &opened, SourceBranch: &head, TargetBranch: &base,
		}, o...)
	})
	if err != nil {
		return forge.PullRequest{}, false, err
	}
	var found *gl.BasicMergeRequest
	for _, mr := range mrs {
		if mr.SourceProjectID != mr.TargetProjectID || mr.SourceBranch != head || mr.TargetBranch != base {
			continue
		}
		if found == nil || mr.IID < found.IID {
			found = mr
		}
	}
	if found == nil {
		return forge.PullRequest{}, false, nil
	}
	return pullRequest(found), true, nil
}

// createOptions is the create request of np, its labels and reviewers
// checked first.
func (p *project) createOptions(ctx context.Context, np forge.NewPullRequest) (*gl.CreateMergeRequestOptions, error) {
	title := np.Title
	if np.Draft && !draftPrefix.MatchString(title) {
		title = draftTitle + title
	}
	opt := &gl.CreateMergeRequestOptions{
		Title: &title, Description: &np.Body, SourceBranch: &np.Head, TargetBranch: &np.Base,
	}
	if len(np.Labels) > 0 {
		if err := p.checkLabels(ctx, np.Labels); err != nil {
			return nil, err
		}
		labels := gl.LabelOptions(np.Labels)
		opt.Labels = &labels
	}
	if len(np.Reviewers) > 0 {
		ids, err := p.userIDs(ctx, np.Reviewers)
		if err != nil {
			return nil, err
		}
		opt.ReviewerIDs = &ids
	}
	return opt, nil
}

// checkLabels refuses labels the project (and its groups) does not have:
// GitLab would create them.
func (p *project) checkLabels(ctx context.Context, names []string) error {
	var missing []string
	yes := true
	for _, name := range names {
		found, err := list(ctx, p, "search label "+name, func(lo gl.ListOptions, o ...gl.RequestOptionFunc) ([]*gl.Label, *gl.Response, error) {
			return p.api.Labels.ListLabels(p.path, &gl.ListLabelsOptions{ListOptions: lo, Search: &name, IncludeAncestorGroups: &yes}, o...)
		})
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(found, func(l *gl.Label) bool { return l.Name == name }) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("gitlab: %s has no label %s (GitLab would create it)", p.path, strings.Join(quoted(missing), ", "))
	}
	return nil
}

// userIDs looks users up by username.
func (p *project) userIDs(ctx context.Context, usernames []string) ([]int64, error) {
	ids := make([]int64, 0, len(usernames))
	for _, name := range usernames {
		id, ok, err := p.userID(ctx, name)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("gitlab: no user %q to request a review from", name)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func (p *project) Update(ctx context.Context, number int, title, body string) (forge.PullRequest, error) {
	current, err := p.PullRequest(ctx, number)
	if err != nil {
		return forge.PullRequest{}, err
	}
	if current.Draft && !draftPrefix.MatchString(title) {
		title = draftTitle + title
	}
	mr, err := call(ctx, p, fmt.Sprintf("update merge request !%d", number), func(o ...gl.RequestOptionFunc) (*gl.MergeRequest, *gl.Response, error) {
		return p.api.MergeRequests.UpdateMergeRequest(p.path, int64(number), &gl.UpdateMergeRequestOptions{Title: &title, Description: &body}, o...)
	})
	if err != nil {
		return forge.PullRequest{}, err
	}
	return pullRequest(&mr.BasicMergeRequest), nil
}

func (p *project) Comment(ctx context.Context, number int, body string) error {
	_, err := p.PostComment(ctx, forge.Thread{Number: number, Pull: true}, body)
	return err
}

func (p *project) PullRequest(ctx context.Context, number int) (forge.PullRequest, error) {
	mr, err := call(ctx, p, fmt.Sprintf("read merge request !%d", number), func(o ...gl.RequestOptionFunc) (*gl.MergeRequest, *gl.Response, error) {
		return p.api.MergeRequests.GetMergeRequest(p.path, int64(number), nil, o...)
	})
	if err != nil {
		return forge.PullRequest{}, err
	}
	return pullRequest(&mr.BasicMergeRequest), nil
}

// pullRequest is a merge request in forge's words.
func pullRequest(mr *gl.BasicMergeRequest) forge.PullRequest {
	title := mr.Title
	if mr.Draft {
		title = draftPrefix.ReplaceAllString(title, "")
	}
	mergeSHA := mr.MergeCommitSHA
	if mergeSHA == "" {
		mergeSHA = mr.SquashCommitSHA
	}
	var author string
	if mr.Author != nil {
		author = mr.Author.Username
	}
	return forge.PullRequest{
		Number:    int(mr.IID),
		URL:       mr.WebURL,
		Title:     title,
		Body:      mr.Description,
		Author:    author,
		Head:      mr.SourceBranch,
		HeadSHA:   mr.SHA,
		Base:      mr.TargetBranch,
		State:     state(mr.State),
		Draft:     mr.Draft,
		Mergeable: mergeable(mr.DetailedMergeStatus),
		Conflicts: mr.DetailedMergeStatus == "conflict",
		MergeSHA:  mergeSHA,
	}
}

// state maps a merge request's state; locked is an open merge request
// whose discussion is locked.
func state(s string) forge.State {
	switch s {
	case "merged":
		return forge.StateMerged
	case "closed":
		return forge.StateClosed
	default: // opened, locked
		return forge.StateOpen
	}
}

// mergeable maps detailed_merge_status: nil while GitLab has not decided,
// false for every reason it cannot merge (conflict, draft_status,
// ci_must_pass, not_approved, not_open, …).
func mergeable(status string) *bool {
	var yes bool
	switch status {
	case "mergeable":
		yes = true
	case "", "unchecked", "checking", "preparing", "approvals_syncing":
		return nil
	}
	return &yes
}

func quoted(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%q", n)
	}
	return out
}
