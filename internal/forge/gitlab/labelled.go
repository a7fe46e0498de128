package gitlab

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/azolla/azolla/internal/forge"
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
	var labels []forge.LabelEvent
	for _, e := range events {
		if e.Action == "add" || e.Action == "remove" {
			l := forge.LabelEvent{Label: e.Label.Name, Added: e.Action == "add", User: e.User.Username}
			if e.CreatedAt != nil {
				l.At = *e.CreatedAt
			}
			labels = append(labels, l)
		}
	}
	user, at := forge.LastLabelled(labels, label)
	return user, at, nil
}
