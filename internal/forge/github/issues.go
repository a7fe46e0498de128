package github

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	gh "github.com/google/go-github/v89/github"

	"github.com/azolla/azolla/internal/forge"
)

// Issues implements forge.Forge; the package comment says how the list is
// read.
func (f *Forge) Issues(ctx context.Context, since time.Time) ([]forge.Issue, error) {
	from := sinceParam(since)
	listed, err := collect(ctx, f, func(ctx context.Context, page int) ([]*gh.Issue, *gh.Response, error) {
		return f.client.Issues.ListByRepo(ctx, f.owner, f.repo, &gh.IssueListByRepoOptions{
			State: "all", Since: from, Sort: "created", Direction: "asc",
			ListOptions: gh.ListOptions{PerPage: f.pageSize, Page: page}})
	})
	if err != nil {
		return nil, fmt.Errorf("github: listing the issues of %s/%s: %w", f.owner, f.repo, err)
	}
	byNumber := map[int]forge.Issue{}
	for _, i := range listed {
		is := issue(i)
		if i.IsPullRequest() || is.UpdatedAt.Before(since.Truncate(time.Second)) {
			continue
		}
		if seen, ok := byNumber[is.Number]; !ok || is.UpdatedAt.After(seen.UpdatedAt) {
			byNumber[is.Number] = is
		}
	}
	out := make([]forge.Issue, 0, len(byNumber))
	for _, is := range byNumber {
		out = append(out, is)
	}
	slices.SortFunc(out, func(a, b forge.Issue) int {
		return cmp.Or(a.UpdatedAt.Compare(b.UpdatedAt), cmp.Compare(a.Number, b.Number))
	})
	return out, nil
}

// Issue implements forge.Forge. GitHub answers a pull request's number
// with it, as an issue with pull_request set: not found here. A deleted
// issue is 410 Gone: not found too.
func (f *Forge) Issue(ctx context.Context, number int) (forge.Issue, error) {
	var got *gh.Issue
	err := f.do(ctx, func(ctx context.Context) (resp *gh.Response, err error) {
		got, resp, err = f.client.Issues.Get(ctx, f.owner, f.repo, number)
		return resp, err
	})
	switch {
	case gone(err):
		return forge.Issue{}, fmt.Errorf("github: reading issue #%d: deleted: %w: %w", number, forge.ErrNotFound, err)
	case err != nil:
		return forge.Issue{}, fmt.Errorf("github: reading issue #%d: %w", number, err)
	case got.IsPullRequest():
		return forge.Issue{}, fmt.Errorf("github: #%d of %s/%s is a pull request, not an issue: %w",
			number, f.owner, f.repo, forge.ErrNotFound)
	}
	return issue(got), nil
}

// Comments implements forge.Forge: an issue's and a pull request's
// conversation alike are issue comments on GitHub, oldest first.
func (f *Forge) Comments(ctx context.Context, on forge.Thread, since time.Time) ([]forge.Comment, error) {
	from := sinceParam(since)
	var param *time.Time
	if !from.IsZero() {
		param = &from
	}
	listed, err := collect(ctx, f, func(ctx context.Context, page int) ([]*gh.IssueComment, *gh.Response, error) {
		return f.client.Issues.ListComments(ctx, f.owner, f.repo, on.Number, &gh.IssueListCommentsOptions{
			Since: param, ListOptions: gh.ListOptions{PerPage: f.pageSize, Page: page}})
	})
	if err != nil {
		return nil, fmt.Errorf("github: reading the comments of %s: %w", on, err)
	}
	var out []forge.Comment
	for _, c := range listed {
		if cm := comment(c); !cm.UpdatedAt.Before(since.Truncate(time.Second)) {
			out = append(out, cm)
		}
	}
	return out, nil
}

// PostComment implements forge.Forge.
func (f *Forge) PostComment(ctx context.Context, on forge.Thread, body string) (forge.Comment, error) {
	var made *gh.IssueComment
	err := f.do(ctx, func(ctx context.Context) (resp *gh.Response, err error) {
		made, resp, err = f.client.Issues.CreateComment(ctx, f.owner, f.repo, on.Number, &gh.IssueComment{Body: &body})
		return resp, err
	})
	if err != nil {
		return forge.Comment{}, fmt.Errorf("github: commenting on %s: %w", on, err)
	}
	return comment(made), nil
}

// EditComment implements forge.Forge. A comment's id is the repository's,
// whatever the thread.
func (f *Forge) EditComment(ctx context.Context, on forge.Thread, id, body string) error {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n <= 0 {
		return fmt.Errorf("github: comment id %q on %s is not one GitHub gives", id, on)
	}
	err = f.do(ctx, func(ctx context.Context) (*gh.Response, error) {
		_, resp, err := f.client.Issues.EditComment(ctx, f.owner, f.repo, n, &gh.IssueComment{Body: &body})
		return resp, err
	})
	if err != nil {
		return fmt.Errorf("github: editing comment %s on %s: %w", id, on, err)
	}
	return nil
}

// sinceParam is the since to ask GitHub for: a second before since, in
// whole seconds, since GitHub's documentation says "after" and azolla's
// seam says "at or after". What it returns from that second is dropped
// here.
func sinceParam(since time.Time) time.Time {
	if since.IsZero() {
		return since
	}
	return since.Truncate(time.Second).Add(-time.Second)
}

// gone says whether err is GitHub's 410 for a deleted issue.
func gone(err error) bool {
	var er *gh.ErrorResponse
	return errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusGone
}

func issue(i *gh.Issue) forge.Issue {
	out := forge.Issue{
		Number:    i.GetNumber(),
		URL:       i.GetHTMLURL(),
		Title:     i.GetTitle(),
		Body:      i.GetBody(),
		Author:    i.GetUser().GetLogin(),
		State:     forge.IssueOpen,
		UpdatedAt: i.GetUpdatedAt().Time,
	}
	if i.GetState() == "closed" {
		out.State = forge.IssueClosed
	}
	for _, l := range i.Labels {
		out.Labels = append(out.Labels, l.GetName())
	}
	for _, a := range i.Assignees {
		out.Assignees = append(out.Assignees, a.GetLogin())
	}
	return out
}

func comment(c *gh.IssueComment) forge.Comment {
	return forge.Comment{
		ID:        strconv.FormatInt(c.GetID(), 10),
		Author:    c.GetUser().GetLogin(),
		Body:      c.GetBody(),
		CreatedAt: c.GetCreatedAt().Time,
		UpdatedAt: c.GetUpdatedAt().Time,
	}
}
