package activities

import (
	"cmp"
	"context"
	"fmt"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/deadline"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/internal/store"
)

// scanDeadlines is ScanDeadlines' body.
func (a *Tracks) scanDeadlines(ctx context.Context, in DeadlineScanInput) (DeadlineScanResult, error) {
	asOf := in.AsOf
	if asOf.IsZero() {
		asOf = a.now()
	}
	asOf = store.NowOr(asOf)
	limit := cmp.Or(in.Limit, DefaultDeadlineScanLimit)
	// Only the objectives already past their deadline are read, so a scan
	// costs what is overdue, not what waits (issue 10's idle cost).
	objs, err := a.Store.ListObjectivesPage(ctx, store.ObjectivesPageParams{
		Statuses:     domain.OpenStatuses(),
		PastDeadline: &store.DeadlineFilter{Before: asOf, SLA: deadline.Resolved(a.Tasks.SLA)},
		After:        in.After, Limit: limit})
	if err != nil {
		return DeadlineScanResult{}, fmt.Errorf("scan deadlines: %w", err)
	}
	res := DeadlineScanResult{Scanned: len(objs)}
	for _, o := range objs {
		if o.Status == domain.StatusNew {
			// A rejected objective stays NEW, its lifecycle ended: it waits
			// for nobody, so it is not overdue.
			rejected, err := a.rejected(ctx, o.ObjectiveID)
			if err != nil {
				return DeadlineScanResult{}, fmt.Errorf("scan deadlines: objective %s: %w", o.ObjectiveID, err)
			}
			if rejected {
				continue
			}
		}
		d := deadline.Deadline(o, a.Tasks.SLA)
		ps := pause.Overdue(deadline.PauseID(o.ObjectiveID, d), o.ObjectiveID, o.Title, d, asOf)
		stored, created, err := a.Store.CreatePauseStateOnce(ctx, &ps)
		if err != nil {
			return DeadlineScanResult{}, permanent(fmt.Errorf("scan deadlines: objective %s: %w", o.ObjectiveID, err))
		}
		res.Overdue = append(res.Overdue, Overdue{ObjectiveID: o.ObjectiveID, DeadlineAt: d,
			PauseStateID: stored.PauseStateID, Created: created})
	}
	if len(objs) == limit && limit > 0 {
		last := objs[len(objs)-1]
		res.Next = &domain.Cursor{CreatedAt: last.CreatedAt, ID: last.ObjectiveID}
	}
	return res, nil
}

// rejected reports whether the objective was rejected (pause.WasRejected).
func (a *Tracks) rejected(ctx context.Context, objectiveID string) (bool, error) {
	ps, err := a.Store.ListPauseStates(ctx, objectiveID)
	return err == nil && pause.WasRejected(ps), err
}
