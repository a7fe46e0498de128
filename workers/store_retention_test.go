package workers_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/store/storetest"
	"github.com/azolla/azolla/workers"
)

func TestNewStorePruner_PrunesTheStoreWithTheConfiguredRetentionAndInterval(t *testing.T) {
	t.Parallel()
	cfg := config.DefaultFor(func(k string) string { return map[string]string{"HOME": "/home/u"}[k] })
	cfg.Store.Retention, cfg.Store.GCInterval = 36*time.Hour, 5*time.Minute
	s := storetest.NewSQLite(t)
	pr := workers.NewStorePruner(cfg, s, nil)
	require.Same(t, s, pr.Store)
	require.Equal(t, 36*time.Hour, pr.Retention)
	require.Equal(t, 5*time.Minute, pr.Interval)
}
