package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph/manifest"
	"github.com/azolla/azolla/internal/executor/diazotroph/triage"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/strictjson"
	"github.com/azolla/azolla/schemas"
)

// ProposalObjectiveID is the objective_id of the n-th proposal (from 0) a
// triage round made of a capture (its capture_buffer_id; a split makes
// several): "t-" and a short hash of the capture id, so a retried gate
// cannot create it twice. Captures merged into a proposal take no id of
// their own.
func ProposalObjectiveID(captureBufferID string, n int) string {
	key := captureBufferID
	if n > 0 {
		key = fmt.Sprintf("%s#%d", captureBufferID, n)
	}
	sum := sha256.Sum256([]byte(key))
	return "t-" + hex.EncodeToString(sum[:8])
}

// trackVerdict is a track workorder's verdict before it is written.
type trackVerdict struct {
	result, reason string
	// captures are the round's capture ids (triage), in snapshot order.
	captures []string
	// objectives are the triage proposals to create, valid; made maps each
	// capture to the objectives it became.
	objectives []*domain.Objective
	made       map[string][]string
	// merged counts the captures merged into another's proposal.
	merged     int
	topActions []string
	// release: a failed triage round hands its captures back to triage
	// (releaseCaptures says when).
	release bool
	// spent is the judged bundle's metadata: what a model route cost.
	spent *domain.BundleMetadata
}

// maxFailures is tasks.triage.max_failures, as the diazotroph reads it.
func (o TaskOptions) maxFailures() int {
	if o.TriageMaxFailures > 0 {
		return o.TriageMaxFailures
	}
	return triage.DefaultMaxFailures
}

// releaseCaptures says whether a triage round that failed its gate hands
// its captures back to triage, for the next round to take without a human
// (docs/protocol/tasks.md#captures): yes while the rounds before it failed
// fewer than maxFailures times in a row, as its snapshot says. The round
// after that many is the built-in fallback; if it fails too, a new round
// would most likely fail the same way, so its captures stay taken and its
// pause asks a human. That bound is what keeps a capture from going round
// for ever.
func releaseCaptures(snapshot string, maxFailures int) bool {
	in, err := triage.DecodeInput(snapshot)
	return err == nil && in.FailedRounds < maxFailures
}

// gateTrack is GateTrack's body.
func (a *Tracks) gateTrack(ctx context.Context, in TrackGateInput) (TrackGateResult, error) {
	w, err := a.Store.GetWorkOrder(ctx, in.WorkOrderID)
	if err != nil {
		return TrackGateResult{}, permanent(fmt.Errorf("gate track workorder %q: %w", in.WorkOrderID, err))
	}
	if w.Track == "" || (w.DiazotrophType != triage.Type && w.DiazotrophType != manifest.Type) {
		err := fmt.Errorf("gate track workorder %q: a %s workorder of no track", w.WorkOrderID, w.DiazotrophType)
		return TrackGateResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInvalidStatus, err)
	}
	if res, done, err := trackGated(ctx, a.Store, w); err != nil || done {
		if done && err == nil {
			a.releaseTrack(ctx, w.Track, w.EventID)
		}
		return res, permanent(err)
	}
	lease, err := a.acquire(ctx, a.Store, domain.ResourceWorkOrder, w.WorkOrderID, a.LeaseTTL)
	if err != nil {
		return TrackGateResult{}, err
	}
	now := a.now()
	v, err := a.judgeTrack(ctx, w, in.RunFailure, now)
	if err != nil {
		a.release(ctx, lease)
		return TrackGateResult{}, permanent(fmt.Errorf("gate track workorder %q: %w", w.WorkOrderID, err))
	}
	var res TrackGateResult
	var written bool
	err = lease.Fenced(ctx, func(q store.Querier) error {
		var done bool
		if res, done, err = trackGated(ctx, q, w); err != nil || done {
			return err
		}
		res, err = a.writeTrackGate(ctx, q, w, v, now)
		written = err == nil
		return err
	})
	a.release(ctx, lease)
	if err != nil {
		return TrackGateResult{}, permanent(fmt.Errorf("gate track workorder %q: %w", w.WorkOrderID, err))
	}
	if written && a.Observer != nil {
		a.Observer.GateVerdict(GateTrack, res.GateResult)
		if v.spent != nil {
			a.Observer.RunSpent(*v.spent)
		}
	}
	// After the durable write: the track may take its next event.
	a.releaseTrack(ctx, w.Track, w.EventID)
	logger(ctx, "", w.WorkOrderID).Info("track workorder gated", "track", w.Track, "gate_result", res.GateResult,
		"objectives", len(res.ObjectiveIDs))
	return res, nil
}

// judgeTrack judges the bundle: the built-in checks, then, for triage, every
// proposal built into a valid objective, for a manifest, its report's top
// actions. Anything invalid is a FAIL that creates nothing.
func (a *Tracks) judgeTrack(ctx context.Context, w *domain.WorkOrder, runFailure string, now time.Time) (trackVerdict, error) {
	b, err := a.Store.GetOutputBundle(ctx, w.WorkOrderID)
	if errors.Is(err, domain.ErrNotFound) {
		b, err = nil, nil
	}
	if err != nil {
		return trackVerdict{}, err
	}
	snap, err := a.Store.GetContextSnapshot(ctx, w.ContextSnapshotID)
	if err != nil {
		return trackVerdict{}, err
	}
	var v trackVerdict
	for _, r := range snap.RelatedYieldRefs {
		if r.Kind == domain.YieldCapture {
			v.captures = append(v.captures, r.Ref)
		}
	}
	v.result, v.reason = verdict(b, runFailure)
	if b != nil {
		v.spent = &b.Metadata
	}
	if v.result == domain.GatePass && b.RunnerStatus != domain.RunnerOK {
		v.result, v.reason = domain.GateFail, "runner status "+b.RunnerStatus+": "+firstLine(b.Notes)
	}
	releasing := func(v trackVerdict) trackVerdict {
		v.release = w.DiazotrophType == triage.Type && releaseCaptures(snap.FullPromptText, a.Tasks.maxFailures())
		return v
	}
	if v.result != domain.GatePass {
		return releasing(v), nil
	}
	fail := func(err error) (trackVerdict, error) {
		v.result, v.reason, v.objectives, v.made, v.topActions = domain.GateFail, err.Error(), nil, nil, nil
		return releasing(v), nil
	}
	switch w.DiazotrophType {
	case triage.Type:
		if err := v.proposals(b.Content, b.Notes, now); err != nil {
			return fail(err)
		}
		v.reason = fmt.Sprintf("%d proposed objective(s) from %d capture(s), each valid", len(v.objectives), len(v.captures))
		if v.merged > 0 {
			v.reason += fmt.Sprintf("; %d capture(s) merged into another's proposal", v.merged)
		}
	case manifest.Type:
		in, err := manifest.DecodeInput(snap.FullPromptText)
		if err != nil {
			return fail(err)
		}
		rep, err := manifest.Build(in)
		if err != nil {
			return fail(err)
		}
		v.topActions = rep.TopActions
		v.reason = fmt.Sprintf("manifest written, %d bytes, %d top action(s)", len(b.Content), len(rep.TopActions))
	}
	return v, nil
}

// proposals decodes a triage bundle, checks that it accounts for every
// capture of the round and for no other (triage.Set.Account), and builds
// each proposal into a NEW objective, validated against the objective
// schema. A proposal's objective id comes from its capture_buffer_id and
// its rank among that capture's proposals, so the same bundle always gives
// the same ids; a merged capture becomes the objective it was merged into.
func (v *trackVerdict) proposals(content string, notes string, now time.Time) error {
	if strings.TrimSpace(content) == "" {
		return fmt.Errorf("triage output is empty: %s", firstLine(notes))
	}
	var set triage.Set
	if err := strictjson.Decode(strings.NewReader(content), &set); err != nil {
		return fmt.Errorf("triage output is not a proposal set: %w", err)
	}
	if err := schemas.ValidateJSON(schemas.TriageProposal, []byte(content)); err != nil {
		return fmt.Errorf("triage output is invalid: %w", err)
	}
	if err := set.Account(v.captures); err != nil {
		return fmt.Errorf("triage output does not account for the round: %w", err)
	}
	v.made = map[string][]string{}
	ranks := map[string]int{}
	for i, p := range set.Proposals {
		o := &domain.Objective{ObjectiveID: ProposalObjectiveID(p.CaptureBufferID, ranks[p.CaptureBufferID]),
			ObjectiveType: "TICKET", Title: p.Title, AcceptanceCriteria: p.AcceptanceCriteria, Status: domain.StatusNew,
			Blockers: []string{}, Urgency: p.Urgency, CreatedAt: now, UpdatedAt: now}
		ranks[p.CaptureBufferID]++
		if o.AcceptanceCriteria == nil {
			o.AcceptanceCriteria = []string{}
		}
		if p.DueAt != nil {
			due := store.NowOr(*p.DueAt)
			o.DueAt = &due
		}
		if err := schemas.Validate(schemas.Objective, o); err != nil {
			return fmt.Errorf("proposal %d (capture %s) is not a valid objective: %w", i, p.CaptureBufferID, err)
		}
		v.objectives = append(v.objectives, o)
		for _, c := range append([]string{p.CaptureBufferID}, p.MergedCaptureBufferIDs...) {
			v.made[c] = append(v.made[c], o.ObjectiveID)
		}
		v.merged += len(p.MergedCaptureBufferIDs)
	}
	return nil
}

// writeTrackGate writes the verdict in the gate's transaction.
func (a *Tracks) writeTrackGate(ctx context.Context, q store.Querier, w *domain.WorkOrder, v trackVerdict, now time.Time) (TrackGateResult, error) {
	res := TrackGateResult{WorkOrderID: w.WorkOrderID, GateResult: v.result, GateReason: v.reason}
	var ps domain.PauseState
	switch {
	case w.DiazotrophType == triage.Type && v.result == domain.GatePass:
		proposed := make([]pause.Proposed, 0, len(v.objectives))
		for _, o := range v.objectives {
			if err := q.CreateObjective(ctx, o); err != nil {
				return res, err
			}
			proposed = append(proposed, pause.Proposed{ObjectiveID: o.ObjectiveID, Title: o.Title})
			res.ObjectiveIDs = append(res.ObjectiveIDs, o.ObjectiveID)
		}
		for _, c := range v.captures {
			if _, err := q.ProcessCapture(ctx, store.ProcessCaptureParams{CaptureBufferID: c, WorkOrderID: w.WorkOrderID,
				ObjectiveIDs: v.made[c], Now: now}); err != nil {
				return res, err
			}
		}
		ps = pause.ProposalsReview(w.WorkOrderID, proposed, now)
	case w.DiazotrophType == triage.Type && v.release:
		// The captures go back with their next CAPTURE_READY event, which
		// the poller hands to the track: the next round needs no human.
		if _, err := q.ReleaseCaptures(ctx, store.ReleaseCapturesParams{WorkOrderID: w.WorkOrderID,
			CaptureBufferIDs: v.captures, Now: now}); err != nil {
			return res, err
		}
		ps = pause.TriageRetried(w.WorkOrderID, v.reason, v.captures, now)
	case w.DiazotrophType == triage.Type:
		ps = pause.TriageFailed(w.WorkOrderID, v.reason, v.captures, now)
	case v.result == domain.GatePass:
		ps = pause.ManifestReady(w.WorkOrderID, v.topActions, now)
	default:
		ps = pause.ManifestFailed(w.WorkOrderID, v.reason, now)
	}
	if _, err := q.UpsertRunRecord(ctx, &domain.RunRecord{WorkOrderID: w.WorkOrderID, Track: w.Track, GateResult: v.result,
		GateReason: v.reason, CreatedAt: now, UpdatedAt: now}); err != nil {
		return res, err
	}
	if err := q.CreatePauseState(ctx, &ps); err != nil {
		return res, err
	}
	res.Pause = ps
	return res, nil
}

// trackPauseReason is the reason of a track workorder's gate pause.
func trackPauseReason(diazotrophType, result string) (subject, reason string) {
	subject = domain.SubjectManifest
	if diazotrophType == triage.Type {
		subject = domain.SubjectTriage
	}
	switch {
	case result != domain.GatePass:
		return subject, domain.PauseGateFailed
	case subject == domain.SubjectTriage:
		return subject, domain.PauseProposalsReview
	}
	return subject, domain.PauseManifestReady
}

// trackGated rebuilds the stored verdict of a track workorder gated before
// from its records; done=false if there is none.
func trackGated(ctx context.Context, q trackReader, w *domain.WorkOrder) (TrackGateResult, bool, error) {
	rr, err := q.GetRunRecord(ctx, w.WorkOrderID)
	if errors.Is(err, domain.ErrNotFound) {
		return TrackGateResult{}, false, nil
	}
	if err != nil {
		return TrackGateResult{}, false, err
	}
	res := TrackGateResult{WorkOrderID: w.WorkOrderID, GateResult: rr.GateResult, GateReason: rr.GateReason}
	subject, reason := trackPauseReason(w.DiazotrophType, rr.GateResult)
	ps, err := q.GetPauseState(ctx, pause.SubjectID(subject, w.WorkOrderID, reason))
	if err != nil {
		return res, true, err
	}
	res.Pause = *ps
	if w.DiazotrophType == triage.Type && rr.GateResult == domain.GatePass {
		snap, err := q.GetContextSnapshot(ctx, w.ContextSnapshotID)
		if err != nil {
			return res, true, err
		}
		// A merged capture names the objective it went into, which
		// another capture of the round names too: each id once.
		seen := map[string]bool{}
		for _, r := range snap.RelatedYieldRefs {
			if r.Kind != domain.YieldCapture {
				continue
			}
			c, err := q.GetCaptureBuffer(ctx, r.Ref)
			if err != nil {
				return res, true, err
			}
			if c.WorkOrderID != w.WorkOrderID {
				continue
			}
			for _, id := range c.ObjectiveIDs {
				if !seen[id] {
					seen[id] = true
					res.ObjectiveIDs = append(res.ObjectiveIDs, id)
				}
			}
		}
	}
	return res, true, nil
}
