package inbox

import (
	"context"
	"slices"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/deadline"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/internal/store"
)

// OverdueStore is what Overdue reads: objectives, and the pause states
// that say whether a NEW one was rejected.
type OverdueStore interface {
	store.ObjectiveQuerier
	store.PauseQuerier
}

// Overdue lists the objectives past their deadline at now, oldest first,
// as the deadline monitor finds them (the store's deadline filter on the
// SLAs package deadline resolves), of status when set; a DONE or a
// rejected objective is never overdue.
func Overdue(ctx context.Context, q OverdueStore, status domain.Status, sla map[string]time.Duration, now time.Time) ([]*domain.Objective, error) {
	statuses := domain.OpenStatuses()
	if status != "" {
		statuses = slices.DeleteFunc(statuses, func(s domain.Status) bool { return s != status })
		if len(statuses) == 0 {
			return nil, nil
		}
	}
	past := &store.DeadlineFilter{Before: now, SLA: deadline.Resolved(sla)}
	list := func(after domain.Cursor) ([]*domain.Objective, error) {
		return q.ListObjectivesPage(ctx, store.ObjectivesPageParams{Statuses: statuses, PastDeadline: past,
			After: after, Limit: pageSize})
	}
	var out []*domain.Objective
	for o, err := range pages(list, objectiveCursor) {
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return dropRejected(ctx, q, out)
}

// dropRejected removes the rejected objectives from list: a rejected
// objective stays NEW, its latest pause of its own REJECTED, and is due
// nothing. Only NEW objectives are looked up.
func dropRejected(ctx context.Context, q store.PauseQuerier, list []*domain.Objective) ([]*domain.Objective, error) {
	out := list[:0]
	for _, o := range list {
		if o.Status == domain.StatusNew {
			pauses, err := q.ListPauseStates(ctx, o.ObjectiveID)
			if err != nil {
				return nil, err
			}
			if pause.WasRejected(pauses) {
				continue
			}
		}
		out = append(out, o)
	}
	return out, nil
}
