package gitea

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/azolla/azolla/internal/forge"
)

// pullJSON is the part of Gitea's PullRequest azolla reads.
type pullJSON struct {
	Number             int        `json:"number"`
	HTMLURL            string     `json:"html_url"`
	Title              string     `json:"title"`
	Body               string     `json:"body"`
	State              string     `json:"state"`
	Draft              bool       `json:"draft"`
	Mergeable          bool       `json:"mergeable"`
	Merged             bool       `json:"merged"`
	MergeCommitSHA     *string    `json:"merge_commit_sha"`
	Head               branchJSON `json:"head"`
	Base               branchJSON `json:"base"`
	RequestedReviewers []userJSON `json:"requested_reviewers"`
	User               *userJSON  `json:"user"`
}

type branchJSON struct {
	Label  string `json:"label"`
	Ref    string `json:"ref"`
	SHA    string `json:"sha"`
	RepoID int64  `json:"repo_id"`
}

type userJSON struct {
	Login string `json:"login"`
}

// branch is the branch's name: Ref while the branch exists, Label (the
// name Gitea keeps) once it is deleted and Ref is refs/pull/N/head.
func (b branchJSON) branch() string {
	if b.Ref != "" && !strings.HasPrefix(b.Ref, "refs/") {
		return b.Ref
	}
	return b.Label
}

// wipPrefixes are Gitea's and Forgejo's default work-in-progress title
// prefixes ([repository.pull-request] WORK_IN_PROGRESS_PREFIXES).
var wipPrefixes = []string{"WIP:", "[WIP]"}

// draftPrefix is what a draft's title gets.
const draftPrefix = "WIP: "

// cutWIP returns title without its work-in-progress prefix, and whether it
// had one.
func cutWIP(title string) (string, bool) {
	for _, p := range wipPrefixes {
		if len(title) >= len(p) && strings.EqualFold(title[:len(p)], p) {
			return strings.TrimLeft(title[len(p):], " "), true
		}
	}
	return title, false
}

func (p pullJSON) toForge() forge.PullRequest {
	pr := forge.PullRequest{Number: p.Number, URL: p.HTMLURL, Title: p.Title, Body: p.Body, Author: login(p.User),
		Head: p.Head.branch(), HeadSHA: p.Head.SHA, Base: p.Base.branch(), State: forge.StateOpen}
	// Forgejo and older Gitea may lack the draft field; the prefix is
	// what it stands for.
	title, wip := cutWIP(p.Title)
	if p.Draft || wip {
		pr.Draft, pr.Title = true, title
	} else {
		pr.Mergeable, pr.Conflicts = &p.Mergeable, !p.Mergeable
	}
	switch {
	case p.Merged:
		pr.State = forge.StateMerged
		if p.MergeCommitSHA != nil {
			pr.MergeSHA = *p.MergeCommitSHA
		}
	case p.State == "closed":
		pr.State = forge.StateClosed
	}
	return pr
}

func (f *Forge) pullPath(number int) string { return f.repoPath + "/pulls/" + strconv.Itoa(number) }

// PullRequest reads a pull request's current state.
func (f *Forge) PullRequest(ctx context.Context, number int) (forge.PullRequest, error) {
	var p pullJSON
	if _, err := f.do(ctx, http.MethodGet, f.pullPath(number), nil, nil, &p); err != nil {
		return forge.PullRequest{}, err
	}
	return p.toForge(), nil
}

// Update sets a pull request's title and body; a draft stays a draft.
func (f *Forge) Update(ctx context.Context, number int, title, body string) (forge.PullRequest, error) {
	cur, err := f.PullRequest(ctx, number)
	if err != nil {
		return forge.PullRequest{}, err
	}
	if _, wip := cutWIP(title); cur.Draft && !wip {
		title = draftPrefix + title
	}
	var p pullJSON
	if _, err := f.do(ctx, http.MethodPatch, f.pullPath(number), nil,
		map[string]any{"title": title, "body": body}, &p); err != nil {
		return forge.PullRequest{}, err
	}
	return p.toForge(), nil
}

// Comment adds a comment to the pull request's conversation: its issue's.
func (f *Forge) Comment(ctx context.Context, number int, body string) error {
	_, err := f.PostComment(ctx, forge.Thread{Number: number, Pull: true}, body)
	return err
}

// OpenOrAdopt returns the open pull request from p.Head onto p.Base,
// creating it when there is none (see doc.go for racing creators).
func (f *Forge) OpenOrAdopt(ctx context.Context, p forge.NewPullRequest) (forge.PullRequest, bool, error) {
	f.openMu.Lock()
	defer f.openMu.Unlock()
	if pr, ok, err := f.adopt(ctx, p); err != nil || ok {
		return pr, false, err
	}
	// Labels are looked up before anything is created: a missing one
	// fails the call with nothing to clean up.
	labels, err := f.labelIDs(ctx, p.Labels)
	if err != nil {
		return forge.PullRequest{}, false, err
	}
	created, err := f.create(ctx, p, labels)
	if hasStatus(err, http.StatusConflict) {
		pr, ok, err := f.adopt(ctx, p)
		if err == nil && !ok {
			err = fmt.Errorf("gitea: a pull request from %s onto %s exists, yet none is open", p.Head, p.Base)
		}
		return pr, false, err
	}
	if err != nil {
		return forge.PullRequest{}, false, err
	}
	first, ok, err := f.firstOpen(ctx, p.Head, p.Base)
	if err != nil {
		return forge.PullRequest{}, false, fmt.Errorf("gitea: look for a racing creator of #%d: %w", created.Number, err)
	}
	if ok && first != created.Number {
		if _, err := f.do(ctx, http.MethodPatch, f.pullPath(created.Number), nil,
			map[string]string{"state": "closed"}, nil); err != nil {
			return forge.PullRequest{}, false, fmt.Errorf("gitea: close #%d, a duplicate of #%d: %w", created.Number, first, err)
		}
		pr, err := f.PullRequest(ctx, first)
		return pr, false, err
	}
	if err := f.requestMissingReviewers(ctx, created, p.Reviewers); err != nil {
		return created.toForge(), true, fmt.Errorf("gitea: pull request #%d created, its reviewers not requested: %w",
			created.Number, err)
	}
	return created.toForge(), true, nil
}

// adopt reads the open pull request from p.Head onto p.Base, if there is
// one.
func (f *Forge) adopt(ctx context.Context, p forge.NewPullRequest) (forge.PullRequest, bool, error) {
	n, ok, err := f.firstOpen(ctx, p.Head, p.Base)
	if err != nil || !ok {
		return forge.PullRequest{}, false, err
	}
	// The listing's head commit may lag the branch; the pull request's
	// own page does not.
	pr, err := f.PullRequest(ctx, n)
	return pr, err == nil, err
}

// firstOpen returns the lowest number among the open pull requests from
// head onto base in this repository (not from forks).
func (f *Forge) firstOpen(ctx context.Context, head, base string) (int, bool, error) {
	first := 0
	// Oldest first, so that a pull request opened while this reads lands
	// on a later page rather than shifting the ones not read yet.
	q := url.Values{"state": {"open"}, "sort": {"oldest"}, "base_branch": {base}}
	err := list(ctx, f, f.repoPath+"/pulls", q, func(page []pullJSON) error {
		for _, p := range page {
			sameRepo := p.Head.RepoID == p.Base.RepoID
			if sameRepo && p.Head.branch() == head && p.Base.branch() == base && p.State == "open" &&
				(first == 0 || p.Number < first) {
				first = p.Number
			}
		}
		return nil
	})
	return first, first != 0, err
}

// create opens the pull request.
func (f *Forge) create(ctx context.Context, p forge.NewPullRequest, labels []int64) (pullJSON, error) {
	title := p.Title
	if _, wip := cutWIP(title); p.Draft && !wip {
		title = draftPrefix + title
	}
	in := map[string]any{"head": p.Head, "base": p.Base, "title": title, "body": p.Body}
	if len(labels) > 0 {
		in["labels"] = labels
	}
	if len(p.Reviewers) > 0 {
		in["reviewers"] = p.Reviewers
	}
	var out pullJSON
	_, err := f.do(ctx, http.MethodPost, f.repoPath+"/pulls", nil, in, &out)
	return out, err
}

// requestMissingReviewers requests the reviewers the creation did not:
// Gitea takes them at creation, a forge that ignores the field does not.
func (f *Forge) requestMissingReviewers(ctx context.Context, pr pullJSON, names []string) error {
	var missing []string
	for _, n := range names {
		if !slices.ContainsFunc(pr.RequestedReviewers, func(u userJSON) bool { return strings.EqualFold(u.Login, n) }) {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	_, err := f.do(ctx, http.MethodPost, f.pullPath(pr.Number)+"/requested_reviewers", nil,
		map[string]any{"reviewers": missing}, nil)
	return err
}

type labelJSON struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// labelIDs returns the ids of the labels named, the repository's first,
// then its organisation's; a name neither has is an error naming it.
func (f *Forge) labelIDs(ctx context.Context, names []string) ([]int64, error) {
	if len(names) == 0 {
		return nil, nil
	}
	found := map[string]int64{}
	collect := func(page []labelJSON) error {
		for _, l := range page {
			if _, ok := found[l.Name]; !ok {
				found[l.Name] = l.ID
			}
		}
		return nil
	}
	if err := list(ctx, f, f.repoPath+"/labels", nil, collect); err != nil {
		return nil, err
	}
	if len(missingLabels(names, found)) > 0 {
		// A user's repository has no organisation (404), and a token
		// without read:organization may not see it (403): then the
		// organisation's labels are missing too.
		err := list(ctx, f, "/orgs/"+url.PathEscape(f.owner)+"/labels", nil, collect)
		if err != nil && !errors.Is(err, forge.ErrNotFound) && !errors.Is(err, forge.ErrUnauthorized) {
			return nil, err
		}
	}
	if missing := missingLabels(names, found); len(missing) > 0 {
		return nil, fmt.Errorf("gitea: %s/%s has no label %s", f.owner, f.repo, strings.Join(missing, ", "))
	}
	ids := make([]int64, 0, len(names))
	for _, n := range names {
		ids = append(ids, found[n])
	}
	return ids, nil
}

func missingLabels(names []string, found map[string]int64) []string {
	var missing []string
	for _, n := range names {
		if _, ok := found[n]; !ok {
			missing = append(missing, strconv.Quote(n))
		}
	}
	return missing
}
