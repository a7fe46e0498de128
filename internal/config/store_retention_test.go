package config_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
)

func TestValidate_StoreRetentionBounds(t *testing.T) {
	t.Parallel()
	c := valid()
	require.Equal(t, 168*time.Hour, c.Store.Retention, "a week, as patch.retention")
	require.Equal(t, time.Hour, c.Store.GCInterval)
	require.NoError(t, c.Validate())

	c.Store.Retention = 30 * time.Minute
	require.ErrorContains(t, c.Validate(), `store.retention: must be a duration of at least 1h0m0s (e.g. 168h for a week), got 30m0s`)
	c.Store.Retention = config.MinStoreRetention
	require.NoError(t, c.Validate())

	c.Store.GCInterval = time.Second
	require.ErrorContains(t, c.Validate(), `store.gc_interval: must be a duration of at least 1m0s, got 1s`)
}
