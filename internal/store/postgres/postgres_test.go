package postgres_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/postgres"
	"github.com/azolla/azolla/internal/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Exercise(t, func(t testing.TB) store.Store { return storetest.NewPostgres(t) })
}

func TestMigrate_ConcurrentRunsOnAFreshSchemaApplyOnce(t *testing.T) {
	s := storetest.NewPostgresUnmigrated(t)
	ctx := context.Background()
	results := make(chan []int, 4)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			applied, err := s.Migrate(ctx)
			errs <- err
			results <- applied
		}()
	}
	var total []int
	for range 4 {
		require.NoError(t, <-errs)
		total = append(total, <-results...)
	}
	slices.Sort(total)
	require.Equal(t, storetest.MigrationVersions(t, "migrations"), total,
		"exactly one of the racing migrators applies each migration")
	applied, err := s.Migrate(ctx)
	require.NoError(t, err)
	require.Empty(t, applied)
}

func TestOpen_BadDSNIsAClearError(t *testing.T) {
	_, err := postgres.Open(context.Background(), "")
	require.ErrorContains(t, err, "empty DSN")
	_, err = postgres.Open(context.Background(), "postgres://nobody@127.0.0.1:1/none?connect_timeout=1")
	require.ErrorContains(t, err, "127.0.0.1:1")
}
