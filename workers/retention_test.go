package workers_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/executor/sandbox/sandboxtest"
	"github.com/azolla/azolla/internal/store/storetest"
	"github.com/azolla/azolla/workers"
)

func TestNewPruner_PrunesTheConfiguredGitDirWithTheConfiguredRetention(t *testing.T) {
	t.Parallel()
	cfg := config.DefaultFor(func(k string) string { return map[string]string{"HOME": "/home/u"}[k] })
	cfg.Patch.Retention, cfg.Patch.GCInterval = 36*time.Hour, 5*time.Minute
	pr, err := workers.NewPruner(cfg, nil, nil)
	require.NoError(t, err)
	require.Equal(t, "/home/u/.local/share/azolla/git", pr.Dir)
	require.Equal(t, 36*time.Hour, pr.Retention)
	require.Equal(t, 5*time.Minute, pr.Interval)
	require.False(t, pr.DryRun)

	cfg.Patch.GitDir = "relative/git"
	pr, err = workers.NewPruner(cfg, nil, nil)
	require.NoError(t, err)
	require.True(t, filepath.IsAbs(pr.Dir), "the pass refuses a relative dir: %s", pr.Dir)
}

func TestNewActivities_TellTheGateHowLongWorkspacesAreKept(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	cfg := config.DefaultFor(func(k string) string { return map[string]string{"HOME": home}[k] })
	cfg.Patch.Retention = 72 * time.Hour
	ex, err := workers.NewExecutors(cfg, sandboxtest.Host(t), nil)
	require.NoError(t, err)
	set, err := workers.NewActivities(cfg, storetest.NewSQLite(t), "tester", ex)
	require.NoError(t, err)
	require.Equal(t, 72*time.Hour, set.Steps.Retention)
}
