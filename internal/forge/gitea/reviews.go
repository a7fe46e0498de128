package gitea

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/forge"
)

type reviewJSON struct {
	ID            int64     `json:"id"`
	User          *userJSON `json:"user"`
	State         string    `json:"state"`
	Body          string    `json:"body"`
	CommitID      string    `json:"commit_id"`
	Dismissed     bool      `json:"dismissed"`
	CommentsCount int       `json:"comments_count"`
	SubmittedAt   time.Time `json:"submitted_at"`
}

type reviewCommentJSON struct {
	ID               int64     `json:"id"`
	Body             string    `json:"body"`
	User             *userJSON `json:"user"`
	Path             string    `json:"path"`
	Position         int       `json:"position"`
	OriginalPosition int       `json:"original_position"`
}

func login(u *userJSON) string {
	if u == nil {
		return ""
	}
	return u.Login
}

// verdicts maps Gitea's submitted review states to the seam's. PENDING
// (not submitted) and REQUEST_REVIEW (a request, not a review) are absent:
// they are not returned.
var verdicts = map[string]forge.ReviewState{
	"APPROVED":        forge.ReviewApproved,
	"REQUEST_CHANGES": forge.ReviewChangesRequested,
	"COMMENT":         forge.ReviewCommented,
}

// Reviews returns the submitted reviews not in after, oldest first, each
// with its line comments; the cursor returned holds them too (doc.go says
// why the cursor is a set).
func (f *Forge) Reviews(ctx context.Context, number int, after forge.Cursor) ([]forge.Review, forge.Cursor, error) {
	seen, err := parseCursor(after)
	if err != nil {
		return nil, after, err
	}
	var submitted []reviewJSON
	err = list(ctx, f, f.pullPath(number)+"/reviews", nil, func(page []reviewJSON) error {
		for _, r := range page {
			if _, ok := verdicts[r.State]; ok {
				submitted = append(submitted, r)
			}
		}
		return nil
	})
	if err != nil {
		return nil, after, err
	}
	slices.SortFunc(submitted, func(a, b reviewJSON) int { return cmp.Compare(a.ID, b.ID) })
	var out []forge.Review
	for i, r := range submitted {
		if seen[r.ID] {
			continue
		}
		rev := forge.Review{ID: strconv.FormatInt(r.ID, 10), Author: login(r.User), State: verdicts[r.State],
			Body: r.Body, SubmittedAt: r.SubmittedAt, CommitSHA: r.CommitID}
		if r.Dismissed && !superseded(r, submitted[i+1:]) {
			rev.State = forge.ReviewDismissed
		}
		if r.CommentsCount > 0 {
			if rev.Comments, err = f.reviewComments(ctx, number, r.ID); err != nil {
				return nil, after, err
			}
		}
		out = append(out, rev)
		seen[r.ID] = true
	}
	return out, formatCursor(seen), nil
}

// superseded reports whether Gitea marked r dismissed because its author
// submitted a later approval or request for changes (later holds the
// reviews after r), which it does to every earlier one of theirs: the
// verdict was replaced, not withdrawn.
func superseded(r reviewJSON, later []reviewJSON) bool {
	return slices.ContainsFunc(later, func(l reviewJSON) bool {
		return login(l.User) == login(r.User) && (l.State == "APPROVED" || l.State == "REQUEST_CHANGES")
	})
}

// reviewComments reads a review's line comments; Gitea returns them all
// at once.
func (f *Forge) reviewComments(ctx context.Context, number int, id int64) ([]forge.ReviewComment, error) {
	var page []reviewCommentJSON
	path := f.pullPath(number) + "/reviews/" + strconv.FormatInt(id, 10) + "/comments"
	if _, err := f.do(ctx, http.MethodGet, path, nil, nil, &page); err != nil {
		return nil, err
	}
	out := make([]forge.ReviewComment, 0, len(page))
	for _, c := range page {
		out = append(out, forge.ReviewComment{ID: strconv.FormatInt(c.ID, 10), Author: login(c.User), Path: c.Path,
			Line: c.Position, OldLine: c.OriginalPosition, Body: c.Body})
	}
	return out, nil
}

// parseCursor reads the set of review ids a cursor holds.
func parseCursor(c forge.Cursor) (map[int64]bool, error) {
	seen := map[int64]bool{}
	if c == "" {
		return seen, nil
	}
	for _, part := range strings.Split(string(c), ",") {
		id, err := strconv.ParseInt(part, 10, 64)
		if err != nil || id <= 0 {
			return nil, fmt.Errorf("gitea: review cursor %q is not one this forge returned", c)
		}
		seen[id] = true
	}
	return seen, nil
}

// formatCursor writes the set canonically, so that reading nothing new
// returns the cursor given.
func formatCursor(seen map[int64]bool) forge.Cursor {
	ids := make([]int64, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	return forge.Cursor(strings.Join(parts, ","))
}
