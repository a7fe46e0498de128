package github

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	gh "github.com/google/go-github/v89/github"

	"github.com/azolla/azolla/internal/forge"
)

// reviewLookback is how long, in seconds, before the latest submission
// read the cursor remembers which reviews it read: a review submitted that
// long before it but visible only later (its author's database write
// landing late) is still returned, once.
const reviewLookback = 60

// Reviews implements forge.Forge; the package comment says what the cursor
// holds and where a comment's lines come from.
func (f *Forge) Reviews(ctx context.Context, number int, after forge.Cursor) ([]forge.Review, forge.Cursor, error) {
	cur, err := parseCursor(after)
	if err != nil {
		return nil, after, fmt.Errorf("github: reading reviews of pull request #%d: %w", number, err)
	}
	all, err := collect(ctx, f, func(ctx context.Context, page int) ([]*gh.PullRequestReview, *gh.Response, error) {
		return f.client.PullRequests.ListReviews(ctx, f.owner, f.repo, number,
			&gh.ListOptions{PerPage: f.pageSize, Page: page})
	})
	if err != nil {
		return nil, after, fmt.Errorf("github: listing reviews of pull request #%d: %w", number, err)
	}
	var submitted, fresh []*gh.PullRequestReview
	for _, r := range all {
		// A pending review is visible to its author only, and it has no
		// submission time yet.
		if r.GetState() == "PENDING" || r.SubmittedAt == nil {
			continue
		}
		submitted = append(submitted, r)
		if cur.isNew(r) {
			fresh = append(fresh, r)
		}
	}
	next := cur.advance(submitted)
	if len(fresh) == 0 {
		return nil, next.text(), nil
	}
	slices.SortFunc(fresh, func(a, b *gh.PullRequestReview) int {
		return cmp.Or(cmp.Compare(a.SubmittedAt.Unix(), b.SubmittedAt.Unix()), cmp.Compare(a.GetID(), b.GetID()))
	})
	ids := make(map[int64]bool, len(fresh))
	for _, r := range fresh {
		ids[r.GetID()] = true
	}
	comments, err := f.reviewComments(ctx, number, ids)
	if err != nil {
		return nil, after, err
	}
	out := make([]forge.Review, 0, len(fresh))
	for _, r := range fresh {
		out = append(out, forge.Review{
			ID:          strconv.FormatInt(r.GetID(), 10),
			Author:      r.GetUser().GetLogin(),
			State:       reviewState(r.GetState()),
			Body:        r.GetBody(),
			SubmittedAt: r.SubmittedAt.Time,
			CommitSHA:   r.GetCommitID(),
			Comments:    comments[r.GetID()],
		})
	}
	return out, next.text(), nil
}

// reviewComments reads the pull request's review comments, every page, and
// returns those of the reviews in ids by review.
func (f *Forge) reviewComments(ctx context.Context, number int, ids map[int64]bool) (map[int64][]forge.ReviewComment, error) {
	all, err := collect(ctx, f, func(ctx context.Context, page int) ([]*gh.PullRequestComment, *gh.Response, error) {
		return f.client.PullRequests.ListComments(ctx, f.owner, f.repo, number, &gh.PullRequestListCommentsOptions{
			Sort: "created", Direction: "asc", ListOptions: gh.ListOptions{PerPage: f.pageSize, Page: page}})
	})
	if err != nil {
		return nil, fmt.Errorf("github: listing review comments of pull request #%d: %w", number, err)
	}
	byReview := make(map[int64][]forge.ReviewComment)
	for _, c := range all {
		if id := c.GetPullRequestReviewID(); ids[id] {
			byReview[id] = append(byReview[id], reviewComment(c))
		}
	}
	return byReview, nil
}

// reviewComment maps one review comment: the line on its side of the
// diff, where it is now, or, when GitHub has marked it outdated, where it
// was written.
func reviewComment(c *gh.PullRequestComment) forge.ReviewComment {
	rc := forge.ReviewComment{
		ID:     strconv.FormatInt(c.GetID(), 10),
		Author: c.GetUser().GetLogin(),
		Path:   c.GetPath(),
		Body:   c.GetBody(),
	}
	if c.GetSubjectType() == "file" {
		return rc
	}
	line := c.GetLine()
	if c.Line == nil {
		line = c.GetOriginalLine()
	}
	if c.GetSide() == "LEFT" {
		rc.OldLine = line
	} else {
		rc.Line = line
	}
	return rc
}

// reviewState maps GitHub's review state. A state this code does not know
// is read as a comment, so that what it says is not lost.
func reviewState(s string) forge.ReviewState {
	switch s {
	case "APPROVED":
		return forge.ReviewApproved
	case "CHANGES_REQUESTED":
		return forge.ReviewChangesRequested
	case "DISMISSED":
		return forge.ReviewDismissed
	default:
		return forge.ReviewCommented
	}
}

// reviewCursor is the text of a forge.Cursor: "SECOND:ID,ID,…", the
// submission second (Unix) of the latest review read and the ids of the
// reviews read that were submitted no more than reviewLookback seconds
// before it. The zero cursor has read nothing.
type reviewCursor struct {
	second int64
	ids    []int64
}

func parseCursor(c forge.Cursor) (reviewCursor, error) {
	if c == "" {
		return reviewCursor{}, nil
	}
	sec, list, ok := strings.Cut(string(c), ":")
	second, err := strconv.ParseInt(sec, 10, 64)
	if !ok || err != nil || second <= 0 {
		return reviewCursor{}, fmt.Errorf("unreadable reviews cursor %q", c)
	}
	cur := reviewCursor{second: second}
	if list == "" {
		return cur, nil
	}
	for _, s := range strings.Split(list, ",") {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return reviewCursor{}, fmt.Errorf("unreadable reviews cursor %q", c)
		}
		cur.ids = append(cur.ids, id)
	}
	return cur, nil
}

func (c reviewCursor) text() forge.Cursor {
	if c.second == 0 {
		return ""
	}
	ids := make([]string, len(c.ids))
	for i, id := range c.ids {
		ids[i] = strconv.FormatInt(id, 10)
	}
	return forge.Cursor(strconv.FormatInt(c.second, 10) + ":" + strings.Join(ids, ","))
}

// isNew says whether r was not read before c.
func (c reviewCursor) isNew(r *gh.PullRequestReview) bool {
	s := r.SubmittedAt.Unix()
	return s > c.second || s >= c.second-reviewLookback && !slices.Contains(c.ids, r.GetID())
}

// advance returns the cursor once every review in submitted has been read.
func (c reviewCursor) advance(submitted []*gh.PullRequestReview) reviewCursor {
	next := reviewCursor{second: c.second}
	for _, r := range submitted {
		next.second = max(next.second, r.SubmittedAt.Unix())
	}
	for _, r := range submitted {
		if r.SubmittedAt.Unix() >= next.second-reviewLookback {
			next.ids = append(next.ids, r.GetID())
		}
	}
	slices.Sort(next.ids)
	next.ids = slices.Compact(next.ids)
	return next
}
