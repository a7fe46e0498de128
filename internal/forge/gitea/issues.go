package gitea

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/azolla/azolla/internal/forge"
)

// issueJSON is the part of Gitea's Issue azolla reads. A pull request is
// an issue to Gitea too, with pull_request set.
type issueJSON struct {
	Number      int         `json:"number"`
	HTMLURL     string      `json:"html_url"`
	Title       string      `json:"title"`
	Body        string      `json:"body"`
	User        *userJSON   `json:"user"`
	State       string      `json:"state"`
	Labels      []labelJSON `json:"labels"`
	Assignees   []userJSON  `json:"assignees"`
	UpdatedAt   time.Time   `json:"updated_at"`
	PullRequest *struct{}   `json:"pull_request"`
}

type commentJSON struct {
	ID        int64     `json:"id"`
	User      *userJSON `json:"user"`
	Body      string    `json:"body"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func (i issueJSON) toForge() forge.Issue {
	out := forge.Issue{Number: i.Number, URL: i.HTMLURL, Title: i.Title, Body: i.Body, Author: login(i.User),
		State: forge.IssueOpen, UpdatedAt: i.UpdatedAt}
	if i.State == "closed" {
		out.State = forge.IssueClosed
	}
	for _, l := range i.Labels {
		out.Labels = append(out.Labels, l.Name)
	}
	for _, a := range i.Assignees {
		out.Assignees = append(out.Assignees, a.Login)
	}
	return out
}

func (c commentJSON) toForge() forge.Comment {
	return forge.Comment{ID: strconv.FormatInt(c.ID, 10), Author: login(c.User), Body: c.Body,
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

func (f *Forge) issuePath(number int) string { return f.repoPath + "/issues/" + strconv.Itoa(number) }

// Issues implements forge.Forge. Gitea lists a repository's issues newest
// created first, whatever is asked: an issue opened while the pages are
// read pushes the rest down a place, so one may be read twice (kept once),
// none is skipped. They are sorted by update here. Its since is the
// issue's updated time at or after it, in whole seconds.
func (f *Forge) Issues(ctx context.Context, since time.Time) ([]forge.Issue, error) {
	q := url.Values{"state": {"all"}, "type": {"issues"}}
	if !since.IsZero() {
		q.Set("since", since.Truncate(time.Second).Format(time.RFC3339))
	}
	byNumber := map[int]forge.Issue{}
	err := list(ctx, f, f.repoPath+"/issues", q, func(page []issueJSON) error {
		for _, i := range page {
			if i.PullRequest != nil {
				continue // type=issues leaves them out; a forge that ignores it does not
			}
			if seen, ok := byNumber[i.Number]; !ok || i.UpdatedAt.After(seen.UpdatedAt) {
				byNumber[i.Number] = i.toForge()
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]forge.Issue, 0, len(byNumber))
	for _, i := range byNumber {
		out = append(out, i)
	}
	slices.SortFunc(out, func(a, b forge.Issue) int {
		return cmp.Or(a.UpdatedAt.Compare(b.UpdatedAt), cmp.Compare(a.Number, b.Number))
	})
	return out, nil
}

// Issue implements forge.Forge; a pull request's number is not found.
func (f *Forge) Issue(ctx context.Context, number int) (forge.Issue, error) {
	var i issueJSON
	if _, err := f.do(ctx, http.MethodGet, f.issuePath(number), nil, nil, &i); err != nil {
		return forge.Issue{}, err
	}
	if i.PullRequest != nil {
		return forge.Issue{}, fmt.Errorf("gitea: #%d of %s/%s is a pull request, not an issue: %w",
			number, f.owner, f.repo, forge.ErrNotFound)
	}
	return i.toForge(), nil
}

// Comments implements forge.Forge: the conversation of an issue and of a
// pull request alike is its issue's comments, which Gitea returns oldest
// first, plain comments only (no reviews, no events), edited at or after
// since.
func (f *Forge) Comments(ctx context.Context, on forge.Thread, since time.Time) ([]forge.Comment, error) {
	var q url.Values
	if !since.IsZero() {
		q = url.Values{"since": {since.Truncate(time.Second).Format(time.RFC3339)}}
	}
	var out []forge.Comment
	// Gitea answers every comment at once; list still reads any page
	// a later version might add.
	err := list(ctx, f, f.issuePath(on.Number)+"/comments", q, func(page []commentJSON) error {
		for _, c := range page {
			out = append(out, c.toForge())
		}
		return nil
	})
	if err != nil {
		return nil, f.unknownThread(ctx, on, err)
	}
	return out, nil
}

// PostComment implements forge.Forge.
func (f *Forge) PostComment(ctx context.Context, on forge.Thread, body string) (forge.Comment, error) {
	var c commentJSON
	_, err := f.do(ctx, http.MethodPost, f.issuePath(on.Number)+"/comments", nil, map[string]string{"body": body}, &c)
	if err != nil {
		return forge.Comment{}, f.unknownThread(ctx, on, err)
	}
	return c.toForge(), nil
}

// EditComment implements forge.Forge. Comment ids are the repository's,
// whatever the thread.
func (f *Forge) EditComment(ctx context.Context, on forge.Thread, id, body string) error {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n <= 0 {
		return fmt.Errorf("gitea: comment id %q on %s is not one Gitea gives", id, on)
	}
	_, err = f.do(ctx, http.MethodPatch, f.repoPath+"/issues/comments/"+strconv.FormatInt(n, 10), nil,
		map[string]string{"body": body}, nil)
	return err
}

// unknownThread turns the 500 Gitea answers for an issue number it does
// not have into forge.ErrNotFound, once the issue is asked for and not
// found; any other error is returned as it is.
func (f *Forge) unknownThread(ctx context.Context, on forge.Thread, err error) error {
	if !hasStatus(err, http.StatusInternalServerError) {
		return err
	}
	if _, ierr := f.do(ctx, http.MethodGet, f.issuePath(on.Number), nil, nil, nil); errors.Is(ierr, forge.ErrNotFound) {
		return fmt.Errorf("gitea: %s of %s/%s: %w", on, f.owner, f.repo, ierr)
	}
	return err
}
