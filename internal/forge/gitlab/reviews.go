package gitlab

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/azolla/azolla/internal/forge"
)

// The system notes that carry a verdict (doc.go).
const (
	noteApproved         = "approved this merge request"
	noteUnapproved       = "unapproved this merge request"
	noteRequestedChanges = "requested changes"
)

func (p *project) Reviews(ctx context.Context, number int, after forge.Cursor) ([]forge.Review, forge.Cursor, error) {
	since, err := parseCursor(after)
	if err != nil {
		return nil, after, err
	}
	self, err := p.username(ctx)
	if err != nil {
		return nil, after, err
	}
	createdAt, asc := "created_at", "asc"
	notes, err := list(ctx, p, fmt.Sprintf("read the notes of merge request !%d", number), func(lo gl.ListOptions, o ...gl.RequestOptionFunc) ([]*gl.Note, *gl.Response, error) {
		return p.api.Notes.ListMergeRequestNotes(p.path, int64(number), &gl.ListMergeRequestNotesOptions{
			ListOptions: lo, OrderBy: &createdAt, Sort: &asc,
		}, o...)
	})
	if err != nil {
		return nil, after, err
	}
	reviews, last := foldReviews(notes, since, self)
	return reviews, cursor(last), nil
}

// parseCursor reads a cursor Reviews returned: the highest note id read.
func parseCursor(c forge.Cursor) (int64, error) {
	if c == "" {
		return 0, nil
	}
	id, err := strconv.ParseInt(string(c), 10, 64)
	if err != nil || id < 0 {
		return 0, fmt.Errorf("gitlab: review cursor %q is not a note id", c)
	}
	return id, nil
}

func cursor(id int64) forge.Cursor {
	if id == 0 {
		return ""
	}
	return forge.Cursor(strconv.FormatInt(id, 10))
}

// foldReviews folds the notes with ids above since into reviews by the
// rules in doc.go, leaving out self's, and returns them oldest first with
// the highest note id seen (since if none is higher).
func foldReviews(notes []*gl.Note, since int64, self string) ([]forge.Review, int64) {
	notes = slices.Clone(notes)
	slices.SortFunc(notes, func(a, b *gl.Note) int { return cmp.Compare(a.ID, b.ID) })
	// Offset pages repeat a note when one before it is deleted meanwhile.
	notes = slices.CompactFunc(notes, func(a, b *gl.Note) bool { return a.ID == b.ID })
	var (
		reviews []forge.Review
		run     *reviewRun
		last    = since
	)
	closeRun := func() {
		if run != nil {
			reviews = append(reviews, run.review())
			run = nil
		}
	}
	for _, n := range notes {
		if n.ID <= since {
			continue
		}
		last = n.ID
		verdict, isVerdict := verdictOf(n)
		if n.System && !isVerdict {
			continue // "added 1 commit" and the like: no review, and no end of one
		}
		if strings.EqualFold(n.Author.Username, self) {
			closeRun()
			continue
		}
		if run != nil && run.author != n.Author.Username {
			closeRun()
		}
		if run == nil {
			run = &reviewRun{author: n.Author.Username}
		}
		run.add(n)
		if isVerdict {
			run.state = verdict
			closeRun()
		}
	}
	closeRun()
	return reviews, last
}

// verdictOf reads a verdict system note.
func verdictOf(n *gl.Note) (forge.ReviewState, bool) {
	if !n.System {
		return "", false
	}
	body := strings.ToLower(strings.TrimSpace(n.Body))
	switch {
	case body == noteApproved:
		return forge.ReviewApproved, true
	case body == noteUnapproved:
		return forge.ReviewDismissed, true
	case strings.HasPrefix(body, noteRequestedChanges):
		return forge.ReviewChangesRequested, true
	}
	return "", false
}

// reviewRun is a review being folded: one author's consecutive notes.
type reviewRun struct {
	author string
	state  forge.ReviewState
	notes  []*gl.Note
}

func (r *reviewRun) add(n *gl.Note) { r.notes = append(r.notes, n) }

func (r *reviewRun) review() forge.Review {
	out := forge.Review{
		ID:     strconv.FormatInt(r.notes[0].ID, 10),
		Author: r.author,
		State:  r.state,
	}
	if out.State == "" {
		out.State = forge.ReviewCommented
	}
	if at := r.notes[len(r.notes)-1].CreatedAt; at != nil {
		out.SubmittedAt = *at
	}
	var body []string
	for _, n := range r.notes {
		switch {
		case n.System:
			// The verdict: the review's state, not its text.
		case n.Type == gl.DiffNote && n.Position != nil:
			if out.CommitSHA == "" {
				out.CommitSHA = n.Position.HeadSHA
			}
			out.Comments = append(out.Comments, lineComment(n))
		default:
			body = append(body, n.Body)
		}
	}
	out.Body = strings.Join(body, "\n\n")
	return out
}

// lineComment is a DiffNote as a line comment.
func lineComment(n *gl.Note) forge.ReviewComment {
	path := n.Position.NewPath
	if path == "" {
		path = n.Position.OldPath
	}
	return forge.ReviewComment{
		ID:      strconv.FormatInt(n.ID, 10),
		Author:  n.Author.Username,
		Path:    path,
		Line:    int(n.Position.NewLine),
		OldLine: int(n.Position.OldLine),
		Body:    n.Body,
	}
}
