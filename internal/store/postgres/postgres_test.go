package postgres_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/postgres"
	"github.com/azolla/azolla/internal/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Exercise(t, func(t testing.TB) store.Store { return storetest.NewPostgres(t) })
}

func TestMigrate_ConcurrentRunsApplyOnce(t *testing.T) {
	s := storetest.NewPostgres(t) // migrated once already
	ctx := context.Background()
	results := make(chan []int, 4)
	for range 4 {
		go func() {
			applied, err := s.Migrate(ctx)
			require.NoError(t, err)
			results <- applied
		}()
	}
	for range 4 {
		require.Empty(t, <-results)
	}
}

func TestOpen_BadDSNIsAClearError(t *testing.T) {
	_, err := postgres.Open(context.Background(), "")
	require.ErrorContains(t, err, "empty DSN")
	_, err = postgres.Open(context.Background(), "postgres://nobody@127.0.0.1:1/none?connect_timeout=1")
	require.ErrorContains(t, err, "127.0.0.1:1")
}
