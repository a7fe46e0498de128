package activities

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph/manifest"
	"github.com/azolla/azolla/internal/executor/diazotroph/triage"
	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/internal/store"
)

// IDs derived from a track event: one event schedules one snapshot and one
// workorder, so retries land on the same rows.
func trackSnapshotID(eventID string) string  { return "cs-" + eventID }
func trackWorkOrderID(eventID string) string { return "wo-" + eventID }

// scheduleTrack is ScheduleTrack's body.
func (a *Tracks) scheduleTrack(ctx context.Context, in TrackScheduleInput) (TrackScheduleResult, error) {
	ev, err := a.Store.GetEvent(ctx, in.EventID)
	if err != nil {
		return TrackScheduleResult{}, permanent(fmt.Errorf("schedule track event %q: %w", in.EventID, err))
	}
	if ev.EventType != domain.EventCaptureReady && ev.EventType != domain.EventManifestRequested {
		err := fmt.Errorf("schedule track event %q: a %s event is not a track event", ev.EventID, ev.EventType)
		return TrackScheduleResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInvalidStatus, err)
	}
	if in.Track == "" {
		err := fmt.Errorf("schedule track event %q: no track named", ev.EventID)
		return TrackScheduleResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeMisconfigured, err)
	}
	if ev.Processed {
		res, err := trackScheduled(ctx, a.Store, ev)
		if err == nil && res.Reason != domain.ReasonScheduled {
			// An attempt that wrote the outcome may have died before
			// freeing the track.
			a.releaseTrack(ctx, in.Track, ev.EventID)
		}
		return res, permanent(err)
	}
	lease, err := a.acquire(ctx, a.Store, domain.ResourceEvent, ev.EventID, a.LeaseTTL)
	if err != nil {
		return TrackScheduleResult{}, err
	}
	defer a.release(ctx, lease)
	if err := holdTrack(ctx, a.Store, in.Track, ev.EventID, a.trackTTL()); err != nil {
		return TrackScheduleResult{}, err
	}

	// The substrate is read before the transaction, with the event's claim
	// kept alive: a remote database may take its statement timeout.
	var (
		queries  []manifest.QueryResult
		queryErr error
	)
	if ev.EventType == domain.EventManifestRequested {
		kctx, stop := lease.Keep(ctx, claim.KeepOptions{OnRenew: func() { heartbeat(ctx, lease) },
			OnError: func(err error) { logger(ctx, "", "").Warn("renew event claim", "error", err) }})
		if a.Tasks.Substrate == nil {
			queryErr = errors.New("no substrate is configured for the manifest (tasks.manifest.substrate)")
		} else {
			queries, queryErr = a.Tasks.Substrate.ManifestQueries(kctx, ev.Scope, a.now())
		}
		stop()
		if queryErr != nil && ctx.Err() != nil {
			return TrackScheduleResult{}, fmt.Errorf("schedule track event %q: %w", ev.EventID, ctx.Err())
		}
	}

	var res TrackScheduleResult
	err = lease.Fenced(ctx, func(q store.Querier) error {
		ev, err := q.GetEvent(ctx, in.EventID)
		if err != nil {
			return err
		}
		if !ev.Processed {
			switch ev.EventType {
			case domain.EventCaptureReady:
				err = a.scheduleTriage(ctx, q, in.Track, ev)
			default:
				err = a.scheduleManifest(ctx, q, in.Track, ev, queries, queryErr)
			}
			if err != nil {
				return err
			}
			if ev, err = q.GetEvent(ctx, in.EventID); err != nil {
				return err
			}
		}
		res, err = trackScheduled(ctx, q, ev)
		return err
	})
	if err != nil {
		return TrackScheduleResult{}, permanent(fmt.Errorf("schedule track event %q: %w", in.EventID, err))
	}
	if res.Reason != domain.ReasonScheduled {
		// Nothing to run: the track is free for the next event.
		a.releaseTrack(ctx, in.Track, ev.EventID)
	}
	woID := ""
	if res.WorkOrder != nil {
		woID = res.WorkOrder.WorkOrderID
	}
	logger(ctx, "", woID).Info("track event processed", "track", in.Track, "event_id", ev.EventID, "reason", res.Reason)
	return res, nil
}

// scheduleTriage freezes the untaken captures into a triage workorder, or
// marks the event ALREADY_TAKEN when its capture is in a workorder already.
func (a *Tracks) scheduleTriage(ctx context.Context, q store.Querier, track string, ev *domain.Event) error {
	now := a.now()
	mark := func(reason string) error {
		_, err := q.MarkEventProcessed(ctx, store.MarkEventProcessedParams{EventID: ev.EventID, Reason: reason, Now: now})
		return err
	}
	own, err := q.GetCaptureBuffer(ctx, ev.SubjectID)
	if errors.Is(err, domain.ErrNotFound) {
		return mark(domain.ReasonAlreadyTaken) // nothing left to take
	}
	if err != nil {
		return err
	}
	if own.WorkOrderID != "" || own.Status != domain.CapturePending {
		return mark(domain.ReasonAlreadyTaken)
	}
	untaken, err := q.ListUntakenCaptures(ctx, a.Tasks.maxCaptures())
	if err != nil {
		return err
	}
	round := triageRound(untaken, own, a.Tasks.maxCaptures(), a.Tasks.maxBytes())
	captures := make([]domain.CaptureBuffer, len(round))
	refs := make([]domain.YieldRef, len(round))
	ids := make([]string, len(round))
	for i, c := range round {
		captures[i], ids[i] = *c, c.CaptureBufferID
		refs[i] = domain.YieldRef{Kind: domain.YieldCapture, Ref: c.CaptureBufferID}
	}
	in := triage.NewInput(captures)
	if in.OpenObjectives, err = openObjectives(ctx, q); err != nil {
		return err
	}
	if in.FailedRounds, err = failedTriageRounds(ctx, q, track); err != nil {
		return err
	}
	prompt, err := triage.EncodeInput(in)
	if err != nil {
		return err
	}
	woID := trackWorkOrderID(ev.EventID)
	if err := a.createTrackWork(ctx, q, track, ev, triage.Type, prompt, refs, now); err != nil {
		return err
	}
	if err := q.TakeCaptures(ctx, store.TakeCapturesParams{WorkOrderID: woID, CaptureBufferIDs: ids, Now: now}); err != nil {
		return err
	}
	return mark(domain.ReasonScheduled)
}

// openObjectives are the objectives not yet DONE, oldest first, at most
// triage.MaxOpenObjectives: what a model route may call a capture a
// duplicate of.
func openObjectives(ctx context.Context, q store.Querier) ([]triage.OpenObjective, error) {
	objs, err := q.ListObjectivesPage(ctx, store.ObjectivesPageParams{Statuses: domain.OpenStatuses(),
		Limit: triage.MaxOpenObjectives})
	if err != nil {
		return nil, err
	}
	out := make([]triage.OpenObjective, 0, len(objs))
	for _, o := range objs {
		out = append(out, triage.OpenObjective{ObjectiveID: o.ObjectiveID, Title: o.Title})
	}
	return out, nil
}

// failedTriageRounds counts the track's latest triage workorders that
// failed their gate, newest first, up to the first that did not: the
// snapshot carries it, so the diazotroph decides on its fallback to the
// built-in rules (tasks.triage.max_failures) from the snapshot alone.
func failedTriageRounds(ctx context.Context, q store.Querier, track string) (int, error) {
	wos, err := q.ListWorkOrders(ctx, store.ListWorkOrdersParams{Track: track, DiazotrophType: triage.Type})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, w := range slices.Backward(wos) {
		rr, err := q.GetRunRecord(ctx, w.WorkOrderID)
		if errors.Is(err, domain.ErrNotFound) {
			break
		}
		if err != nil {
			return 0, err
		}
		if rr.GateResult != domain.GateFail {
			break
		}
		n++
	}
	return n, nil
}

// triageRound is one round's captures, oldest first: at most maxCount,
// their content within maxBytes (at least one whatever its size), and
// always the event's own capture, so no event is processed leaving its
// capture behind.
func triageRound(untaken []*domain.CaptureBuffer, own *domain.CaptureBuffer, maxCount, maxBytes int) []*domain.CaptureBuffer {
	byAge := func(x, y *domain.CaptureBuffer) int {
		return cmp.Or(x.CreatedAt.Compare(y.CreatedAt), strings.Compare(x.CaptureBufferID, y.CaptureBufferID))
	}
	cs := slices.Clone(untaken)
	if !slices.ContainsFunc(cs, func(c *domain.CaptureBuffer) bool { return c.CaptureBufferID == own.CaptureBufferID }) {
		cs = append(cs, own)
	}
	slices.SortStableFunc(cs, byAge)
	// The event's own capture first, then the oldest others, within the
	// bounds; the chosen ones go back to age order.
	picked := []*domain.CaptureBuffer{own}
	size := len(own.Content)
	for _, c := range cs {
		if len(picked) >= maxCount {
			break
		}
		if c.CaptureBufferID == own.CaptureBufferID {
			continue
		}
		if size+len(c.Content) > maxBytes {
			break
		}
		picked = append(picked, c)
		size += len(c.Content)
	}
	slices.SortStableFunc(picked, byAge)
	return picked
}

// scheduleManifest freezes the substrate's answers into a manifest
// workorder, or, when the substrate could not be read, marks the event
// BLOCKED with a pause saying why.
func (a *Tracks) scheduleManifest(ctx context.Context, q store.Querier, track string, ev *domain.Event,
	queries []manifest.QueryResult, queryErr error) error {
	now := a.now()
	if queryErr != nil {
		ps := pause.ManifestBlocked(ev.EventID, queryErr.Error(), now)
		if _, _, err := q.CreatePauseStateOnce(ctx, &ps); err != nil {
			return err
		}
		_, err := q.MarkEventProcessed(ctx, store.MarkEventProcessedParams{EventID: ev.EventID, Reason: domain.ReasonBlocked, Now: now})
		return err
	}
	last, err := lastManifestAt(ctx, q, track)
	if err != nil {
		return err
	}
	prompt, err := manifest.EncodeInput(manifest.Input{Format: manifest.InputFormat, Scope: ev.Scope, Now: now,
		LastManifestAt: last, Queries: queries})
	if err != nil {
		return err
	}
	refs := make([]domain.YieldRef, 0, len(queries))
	for _, qr := range queries {
		hash, err := qr.ContentHash()
		if err != nil {
			return err
		}
		rows := len(qr.Rows)
		params := qr.Parameters
		if params == nil {
			params = map[string]string{}
		}
		refs = append(refs, domain.YieldRef{Kind: domain.YieldSubstrateQuery, Ref: qr.Name, Version: qr.Version,
			Substrate: qr.Substrate, Parameters: params, RowCount: &rows, ContentHash: hash})
	}
	if err := a.createTrackWork(ctx, q, track, ev, manifest.Type, prompt, refs, now); err != nil {
		return err
	}
	_, err = q.MarkEventProcessed(ctx, store.MarkEventProcessedParams{EventID: ev.EventID, Reason: domain.ReasonScheduled, Now: now})
	return err
}

// lastManifestAt is when the track's previous manifest was written: the
// created_at of the newest manifest workorder that has its run record.
func lastManifestAt(ctx context.Context, q store.Querier, track string) (*time.Time, error) {
	wos, err := q.ListWorkOrders(ctx, store.ListWorkOrdersParams{Track: track, DiazotrophType: manifest.Type})
	if err != nil {
		return nil, err
	}
	var last *time.Time
	for _, w := range wos {
		if _, err := q.GetRunRecord(ctx, w.WorkOrderID); errors.Is(err, domain.ErrNotFound) {
			continue
		} else if err != nil {
			return nil, err
		}
		if last == nil || w.CreatedAt.After(*last) {
			t := w.CreatedAt
			last = &t
		}
	}
	return last, nil
}

// createTrackWork writes a track workorder and its snapshot.
func (a *Tracks) createTrackWork(ctx context.Context, q store.Querier, track string, ev *domain.Event, typ, prompt string,
	refs []domain.YieldRef, now time.Time) error {
	snap := &domain.ContextSnapshot{ContextSnapshotID: trackSnapshotID(ev.EventID), Track: track, FullPromptText: prompt,
		RelatedYieldRefs: refs, CreatedAt: now}
	if err := q.CreateContextSnapshot(ctx, snap); err != nil {
		return err
	}
	_, _, err := q.CreateWorkOrder(ctx, &domain.WorkOrder{WorkOrderID: trackWorkOrderID(ev.EventID), EventID: ev.EventID,
		Track: track, DiazotrophType: typ, ContextSnapshotID: snap.ContextSnapshotID,
		BudgetMS: a.Tasks.budget().Milliseconds(), Status: domain.WorkOrderCreated, CreatedAt: now})
	return err
}

// trackScheduled reads the stored outcome of a processed track event.
func trackScheduled(ctx context.Context, q trackReader, ev *domain.Event) (TrackScheduleResult, error) {
	res := TrackScheduleResult{EventID: ev.EventID, Reason: ev.ProcessedReason}
	switch ev.ProcessedReason {
	case domain.ReasonScheduled:
		w, err := q.GetWorkOrderByEvent(ctx, ev.EventID)
		if err != nil {
			return res, err
		}
		res.WorkOrder = workOrderRef(w)
	case domain.ReasonBlocked:
		p, err := q.GetPauseState(ctx, pause.SubjectID(domain.SubjectManifest, ev.EventID, domain.PauseBlocked))
		if err != nil {
			return res, err
		}
		res.Pause = p
	}
	return res, nil
}
