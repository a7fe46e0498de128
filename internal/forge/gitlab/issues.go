package gitlab

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/azolla/azolla/internal/forge"
)

// Issues implements forge.Forge: doc.go says how the list is read.
func (p *project) Issues(ctx context.Context, since time.Time) ([]forge.Issue, error) {
	createdAt, asc := "created_at", "asc"
	opt := gl.ListProjectIssuesOptions{OrderBy: &createdAt, Sort: &asc}
	if !since.IsZero() {
		from := since.Truncate(time.Second)
		opt.UpdatedAfter = &from
	}
	listed, err := list(ctx, p, "list issues", func(lo gl.ListOptions, o ...gl.RequestOptionFunc) ([]*gl.Issue, *gl.Response, error) {
		page := opt
		page.ListOptions = lo
		return p.api.Issues.ListProjectIssues(p.path, &page, o...)
	})
	if err != nil {
		return nil, err
	}
	byNumber := map[int]forge.Issue{}
	for _, i := range listed {
		is := issue(i)
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

// Issue implements forge.Forge. A merge request is never an issue here:
// GitLab numbers them apart, so number is an issue's iid.
func (p *project) Issue(ctx context.Context, number int) (forge.Issue, error) {
	i, err := call(ctx, p, fmt.Sprintf("read issue #%d", number), func(o ...gl.RequestOptionFunc) (*gl.Issue, *gl.Response, error) {
		return p.api.Issues.GetIssue(p.path, int64(number), o...)
	})
	if err != nil {
		return forge.Issue{}, err
	}
	return issue(i), nil
}

// Comments implements forge.Forge: the notes of the issue or merge
// request, oldest first, without GitLab's system notes ("added 1 commit",
// a verdict) and a review's line comments (DiffNotes). The notes API has
// no since: every note is read, and those updated before since dropped.
func (p *project) Comments(ctx context.Context, on forge.Thread, since time.Time) ([]forge.Comment, error) {
	createdAt, asc := "created_at", "asc"
	var notes []*gl.Note
	var err error
	if on.Pull {
		notes, err = list(ctx, p, "read the notes of "+thread(on), func(lo gl.ListOptions, o ...gl.RequestOptionFunc) ([]*gl.Note, *gl.Response, error) {
			return p.api.Notes.ListMergeRequestNotes(p.path, int64(on.Number), &gl.ListMergeRequestNotesOptions{
				ListOptions: lo, OrderBy: &createdAt, Sort: &asc}, o...)
		})
	} else {
		notes, err = list(ctx, p, "read the notes of "+thread(on), func(lo gl.ListOptions, o ...gl.RequestOptionFunc) ([]*gl.Note, *gl.Response, error) {
			return p.api.Notes.ListIssueNotes(p.path, int64(on.Number), &gl.ListIssueNotesOptions{
				ListOptions: lo, OrderBy: &createdAt, Sort: &asc}, o...)
		})
	}
	if err != nil {
		return nil, err
	}
	// Offset pages repeat a note when one before it is deleted meanwhile.
	notes = slices.CompactFunc(notes, func(a, b *gl.Note) bool { return a.ID == b.ID })
	from := since.Truncate(time.Second)
	var out []forge.Comment
	for _, n := range notes {
		if n.System || n.Type == gl.DiffNote {
			continue
		}
		if c := comment(n); !c.UpdatedAt.Before(from) {
			out = append(out, c)
		}
	}
	return out, nil
}

// PostComment implements forge.Forge.
func (p *project) PostComment(ctx context.Context, on forge.Thread, body string) (forge.Comment, error) {
	what := "comment on " + thread(on)
	var n *gl.Note
	var err error
	if on.Pull {
		n, err = call(ctx, p, what, func(o ...gl.RequestOptionFunc) (*gl.Note, *gl.Response, error) {
			return p.api.Notes.CreateMergeRequestNote(p.path, int64(on.Number), &gl.CreateMergeRequestNoteOptions{Body: &body}, o...)
		})
	} else {
		n, err = call(ctx, p, what, func(o ...gl.RequestOptionFunc) (*gl.Note, *gl.Response, error) {
			return p.api.Notes.CreateIssueNote(p.path, int64(on.Number), &gl.CreateIssueNoteOptions{Body: &body}, o...)
		})
	}
	if err != nil {
		return forge.Comment{}, err
	}
	return comment(n), nil
}

// EditComment implements forge.Forge: id is the note's, on the issue or
// merge request on names.
func (p *project) EditComment(ctx context.Context, on forge.Thread, id, body string) error {
	note, err := strconv.ParseInt(id, 10, 64)
	if err != nil || note <= 0 {
		return fmt.Errorf("gitlab: note id %q on %s is not one GitLab gives", id, thread(on))
	}
	what := fmt.Sprintf("edit note %d on %s", note, thread(on))
	if on.Pull {
		_, err = call(ctx, p, what, func(o ...gl.RequestOptionFunc) (*gl.Note, *gl.Response, error) {
			return p.api.Notes.UpdateMergeRequestNote(p.path, int64(on.Number), note, &gl.UpdateMergeRequestNoteOptions{Body: &body}, o...)
		})
	} else {
		_, err = call(ctx, p, what, func(o ...gl.RequestOptionFunc) (*gl.Note, *gl.Response, error) {
			return p.api.Notes.UpdateIssueNote(p.path, int64(on.Number), note, &gl.UpdateIssueNoteOptions{Body: &body}, o...)
		})
	}
	return err
}

// thread names a thread as GitLab does: issue #N, merge request !N.
func thread(on forge.Thread) string {
	if on.Pull {
		return fmt.Sprintf("merge request !%d", on.Number)
	}
	return fmt.Sprintf("issue #%d", on.Number)
}

func issue(i *gl.Issue) forge.Issue {
	out := forge.Issue{
		Number: int(i.IID),
		URL:    i.WebURL,
		Title:  i.Title,
		Body:   i.Description,
		State:  forge.IssueOpen,
	}
	if i.Author != nil {
		out.Author = i.Author.Username
	}
	if i.State == "closed" {
		out.State = forge.IssueClosed
	}
	if len(i.Labels) > 0 {
		out.Labels = slices.Clone([]string(i.Labels))
	}
	for _, a := range i.Assignees {
		out.Assignees = append(out.Assignees, a.Username)
	}
	if i.UpdatedAt != nil {
		out.UpdatedAt = *i.UpdatedAt
	}
	return out
}

func comment(n *gl.Note) forge.Comment {
	c := forge.Comment{ID: strconv.FormatInt(n.ID, 10), Author: n.Author.Username, Body: n.Body}
	if n.CreatedAt != nil {
		c.CreatedAt = *n.CreatedAt
	}
	c.UpdatedAt = c.CreatedAt
	if n.UpdatedAt != nil {
		c.UpdatedAt = *n.UpdatedAt
	}
	return c
}
