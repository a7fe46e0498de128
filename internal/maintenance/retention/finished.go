package retention

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/azolla/azolla/internal/maintenance"
	"github.com/azolla/azolla/internal/store"
)

// FinishedStore is what a FinishedPruner needs of the store: its one
// pruning statement.
type FinishedStore interface {
	PruneFinished(ctx context.Context, p store.PruneFinishedParams) (store.PruneFinishedCounts, error)
}

// FinishedPruner is the store's retention of finished work (store.retention;
// store.PruneFinishedParams says what goes and what stays), as a background
// service (Start, Stop) or one pass at a time (RunOnce).
//
// It needs no leadership: two workers' passes delete the same rows, and a
// row one of them deleted is simply not there for the other.
type FinishedPruner struct {
	Store FinishedStore
	// Retention is how long a row is kept once its use ended.
	Retention time.Duration
	// Interval is the time between passes of Start (default an hour).
	Interval time.Duration
	// Batch bounds the rows one statement deletes (default
	// store.DefaultPruneBatch).
	Batch int
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Log gets a line per pass that deleted something (default: none).
	Log *slog.Logger

	loopOnce sync.Once
	loop     *maintenance.Loop[store.PruneFinishedCounts]
}

func (p *FinishedPruner) background() *maintenance.Loop[store.PruneFinishedCounts] {
	p.loopOnce.Do(func() {
		interval := p.Interval
		if interval <= 0 {
			interval = time.Hour
		}
		p.loop = &maintenance.Loop[store.PruneFinishedCounts]{Name: "store retention", Interval: interval,
			Pass: p.RunOnce, Log: p.log()}
	})
	return p.loop
}

// Start runs a pass at once and then every Interval, in the background,
// until Stop or ctx is done.
func (p *FinishedPruner) Start(ctx context.Context) { p.background().Start(ctx) }

// Stop ends the service and waits for the pass in flight.
func (p *FinishedPruner) Stop() { p.background().Stop() }

// RunOnce deletes what finished work left behind before now - Retention.
func (p *FinishedPruner) RunOnce(ctx context.Context) (store.PruneFinishedCounts, error) {
	if p.Retention <= 0 {
		return store.PruneFinishedCounts{}, fmt.Errorf("store retention pass: retention must be positive, got %s", p.Retention)
	}
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	counts, err := p.Store.PruneFinished(ctx, store.PruneFinishedParams{Before: now().Add(-p.Retention), Batch: p.Batch})
	if counts.Total() > 0 {
		p.log().Info("store retention pass", "claims", counts.Claims, "job_leases", counts.JobLeases,
			"job_messages", counts.JobMessages)
	}
	return counts, err
}

func (p *FinishedPruner) log() *slog.Logger {
	if p.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return p.Log
}
