package gitea

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/azolla/azolla/internal/forge"
)

// timelineJSON is the part of one entry of an issue's timeline azolla
// reads. A "label" entry's body is "1" when the label was added and ""
// when it was removed (Gitea keeps the two as one comment type).
type timelineJSON struct {
	Type      string     `json:"type"`
	Body      string     `json:"body"`
	User      *userJSON  `json:"user"`
	Label     *labelJSON `json:"label"`
	CreatedAt time.Time  `json:"created_at"`
}

// LabelledBy implements forge.Forge from the issue's timeline, oldest
// entry first: the last adding of the label wins, and a removal after it
// leaves no one.
func (f *Forge) LabelledBy(ctx context.Context, number int, label string) (string, time.Time, error) {
	var events []forge.LabelEvent
	err := f.timeline(ctx, number, func(e timelineJSON) {
		if e.Type == "label" && e.Label != nil {
			events = append(events, forge.LabelEvent{Label: e.Label.Name, Added: e.Body == "1", User: login(e.User),
				At: e.CreatedAt})
		}
	})
	if err != nil {
		return "", time.Time{}, f.unknownThread(ctx, forge.Thread{Number: number}, err)
	}
	user, at := forge.LastLabelled(events, label)
	return user, at, nil
}

// timeline reads every page of an issue's timeline. It cannot use list:
// Gitea's X-Total-Count on the timeline counts the page it answers, not
// the timeline (1.26: two entries of three at limit=2, then "1" on page
// two), so the pages are read until an empty one.
func (f *Forge) timeline(ctx context.Context, number int, each func(timelineJSON)) error {
	path := f.issuePath(number) + "/timeline"
	q := url.Values{"limit": {strconv.Itoa(f.pageSize)}}
	for page := 1; page <= maxPages; page++ {
		q.Set("page", strconv.Itoa(page))
		var items []timelineJSON
		if _, err := f.do(ctx, http.MethodGet, path, q, nil, &items); err != nil {
			return err
		}
		if len(items) == 0 {
			return nil
		}
		for _, e := range items {
			each(e)
		}
	}
	return fmt.Errorf("gitea: GET %s: more than %d pages", path, maxPages)
}
