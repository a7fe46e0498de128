package gitlab

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	gl "gitlab.com/gitlab-org/api/client-go"
)

// LabelledBy implements forge.Forge from the issue's resource label
// events, read in the order GitLab made them (by id): the last "add" of
// the label wins, and a "remove" after it leaves no one.
func (p *project) LabelledBy(ctx context.Context, number int, label string) (string, time.Time, error) {
	events, err := list(ctx, p, fmt.Sprintf("read the label events of issue #%d", number),
		func(lo gl.ListOptions, o ...gl.RequestOptionFunc) ([]*gl.LabelEvent, *gl.Response, error) {
			return p.api.ResourceLabelEvents.ListIssueLabelEvents(p.path, int64(number),
				&gl.ListLabelEventsOptions{ListOptions: lo}, o...)
		})
	if err != nil {
		return "", time.Time{}, err
	}
	slices.SortStableFunc(events, func(a, b *gl.LabelEvent) int { return cmp.Compare(a.ID, b.ID) })
	var user string
	var at time.Time
	for _, e := range events {
		if !strings.EqualFold(e.Label.Name, label) {
			continue
		}
		switch e.Action {
		case "add":
			user, at = e.User.Username, time.Time{}
			if e.CreatedAt != nil {
				at = *e.CreatedAt
			}
		case "remove":
			user, at = "", time.Time{}
		}
	}
	return user, at, nil
}
