package sqlite_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/sqlite"
	"github.com/azolla/azolla/internal/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Exercise(t, func(t testing.TB) store.Store { return storetest.NewSQLite(t) })
}

func TestMigrate_FreshFileThenAgain(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "nested", "azolla.db")
	_, err := sqlite.Open(ctx, path)
	require.Error(t, err, "the directory is the caller's to create")

	path = filepath.Join(t.TempDir(), "azolla.db")
	s, err := sqlite.Open(ctx, path)
	require.NoError(t, err)
	applied, err := s.Migrate(ctx)
	require.NoError(t, err)
	require.Equal(t, storetest.MigrationVersions(t, "migrations"), applied)
	require.NoError(t, s.Close())

	// A second process opening the same file finds nothing to do.
	s, err = sqlite.Open(ctx, path)
	require.NoError(t, err)
	defer s.Close()
	applied, err = s.Migrate(ctx)
	require.NoError(t, err)
	require.Empty(t, applied)
}

func TestMigrate_ConcurrentOpenersOfAFreshFileApplyOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "azolla.db")
	const openers = 4
	type result struct {
		applied []int
		err     error
	}
	results := make(chan result, openers)
	for range openers {
		go func() {
			s, err := sqlite.Open(ctx, path)
			if err != nil {
				results <- result{err: err}
				return
			}
			defer s.Close()
			applied, err := s.Migrate(ctx)
			results <- result{applied, err}
		}()
	}
	var total []int
	for range openers {
		r := <-results
		require.NoError(t, r.err)
		total = append(total, r.applied...)
	}
	slices.Sort(total)
	require.Equal(t, storetest.MigrationVersions(t, "migrations"), total, "exactly one opener applies each migration")
}
