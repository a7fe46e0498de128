package workers

import (
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/executor/gitops"
	"github.com/azolla/azolla/internal/maintenance/retention"
	"github.com/azolla/azolla/internal/store"
)

// NewPruner builds the workspace retention pass over this machine's git dir
// (patch.git_dir) from cfg: patch.retention and patch.gc_interval. Worker
// processes run it in the background; `azolla gc` runs one pass.
func NewPruner(cfg config.Config, st store.Querier, log *slog.Logger) (*retention.Pruner, error) {
	dir, err := filepath.Abs(cfg.GitDir())
	if err != nil {
		return nil, fmt.Errorf("patch.git_dir: %w", err)
	}
	return &retention.Pruner{Store: st, Git: gitops.Git{}, Dir: dir, Retention: cfg.Patch.Retention,
		Interval: cfg.Patch.GCInterval, Log: log, Environments: environmentStore(cfg)}, nil
}
