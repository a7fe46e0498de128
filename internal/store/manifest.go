package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/azolla/azolla/internal/domain"
)

// RequestManifest writes one MANIFEST_REQUESTED event: a manifest request
// is an event of its own, its subject a fresh request id (mr-<time>-<hex>)
// at transition_seq 0. scope ("" for everything) is what the manifest
// should cover.
func RequestManifest(ctx context.Context, q Querier, scope string, now time.Time) (*domain.Event, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("request manifest: %w", err)
	}
	now = NowOr(now)
	id := hex.EncodeToString(b)
	e, _, err := q.EmitEvent(ctx, &domain.Event{EventID: "ev-manifest-" + id, EventType: domain.EventManifestRequested,
		SubjectID: "mr-" + now.Format("20060102T150405Z") + "-" + id[:8], Scope: scope, CreatedAt: now})
	if err != nil {
		return nil, fmt.Errorf("request manifest: %w", err)
	}
	return e, nil
}
