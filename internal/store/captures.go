package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/azolla/azolla/internal/domain"
)

// CaptureReadySeq is the transition_seq of a capture's first CAPTURE_READY
// event. A capture has no status_seq; the unique key (event_type,
// subject_id, transition_seq) with this fixed value allows exactly one
// first event per capture, whoever emits it. A failed triage round that
// hands the capture back (ReleaseCaptures) emits the next one, at the
// capture's highest transition_seq plus one.
const CaptureReadySeq int64 = 0

// EmitCaptureReady emits the capture's first CAPTURE_READY event; if it
// exists already (another emitter won), it returns that one and
// created=false. The unique key, not the event id, is what makes it one:
// event ids are random because one derived from the capture id could
// outgrow the id pattern (a capture id may be 200 characters long).
func EmitCaptureReady(ctx context.Context, q EventQuerier, captureBufferID string, now time.Time) (*domain.Event, bool, error) {
	return EmitCaptureReadyAt(ctx, q, captureBufferID, CaptureReadySeq, now)
}

// EmitCaptureReadyAt emits the capture's CAPTURE_READY event of
// transition_seq seq, or returns the one that has it (created=false).
func EmitCaptureReadyAt(ctx context.Context, q EventQuerier, captureBufferID string, seq int64, now time.Time) (*domain.Event, bool, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return nil, false, fmt.Errorf("emit CAPTURE_READY for %q: %w", captureBufferID, err)
	}
	return q.EmitEvent(ctx, &domain.Event{EventID: "ev-capture-" + hex.EncodeToString(b), EventType: domain.EventCaptureReady,
		SubjectID: captureBufferID, TransitionSeq: seq, CreatedAt: NowOr(now)})
}

// AddCapture writes capture c and its first CAPTURE_READY event in one
// transaction of tx, and returns the event: a capture added by hand goes
// to triage at once, without waiting for the poller, which emits the
// event only for captures written straight into the database.
func AddCapture(ctx context.Context, tx Transactor, c *domain.CaptureBuffer, now time.Time) (*domain.Event, error) {
	var ev *domain.Event
	err := tx.InTx(ctx, func(q Querier) error {
		ev = nil
		if err := q.CreateCaptureBuffer(ctx, c); err != nil {
			return err
		}
		var err error
		ev, _, err = EmitCaptureReady(ctx, q, c.CaptureBufferID, now)
		return err
	})
	return ev, err
}
