package workers

import (
	"log/slog"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/maintenance/retention"
	"github.com/azolla/azolla/internal/store"
)

// NewStorePruner builds the store's retention pass over finished work
// from cfg: store.retention and store.gc_interval. Worker processes (and
// azolla dev) run it in the background.
func NewStorePruner(cfg config.Config, st store.Store, log *slog.Logger) *retention.FinishedPruner {
	return &retention.FinishedPruner{Store: st, Retention: cfg.Store.Retention, Interval: cfg.Store.GCInterval, Log: log}
}
