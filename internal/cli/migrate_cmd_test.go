package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMigrateAppliesMigrationsOnceIntoANewDataDir(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(t.TempDir(), "not", "yet", "there")
	env := map[string]string{"AZOLLA_DATA_DIR": dataDir}

	first := azolla(t, env, "migrate")
	require.Equal(t, 0, first.code, first.stderr)
	require.Regexp(t, regexp.MustCompile(`^(applied migration \d+\n)+$`), first.stdout)

	info, err := os.Stat(dataDir)
	require.NoError(t, err)
	require.Zero(t, info.Mode().Perm()&^0o750, "data dir mode %v is wider than 0750", info.Mode().Perm())
	require.FileExists(t, filepath.Join(dataDir, "azolla.db"))

	second := azolla(t, env, "migrate")
	require.Equal(t, 0, second.code, second.stderr)
	require.Equal(t, "store is up to date\n", second.stdout)
}

func TestMigrateUsesTheConfiguredSQLitePath(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "sub", "custom.db")
	res := azolla(t, map[string]string{"AZOLLA_STORE_SQLITE_PATH": db}, "migrate")
	require.Equal(t, 0, res.code, res.stderr)
	require.FileExists(t, db)
}

func TestMigrateFailsWithStatusOneWhenTheStoreCannotOpen(t *testing.T) {
	t.Parallel()
	// A regular file where the data dir should be.
	blocker := writeFile(t, t.TempDir(), "file", "")
	res := azolla(t, map[string]string{"AZOLLA_DATA_DIR": blocker}, "migrate")
	require.Equal(t, 1, res.code, res.stderr)
	require.Regexp(t, `^azolla: open sqlite store: create data dir: .*\n$`, res.stderr)
}

func TestMigrateRefusesInvalidConfigWithStatusTwo(t *testing.T) {
	t.Parallel()
	res := azolla(t, map[string]string{"AZOLLA_STORE_DRIVER": "postgres"}, "migrate")
	require.Equal(t, 2, res.code)
	require.Contains(t, res.stderr, `store.dsn: required when store.driver is "postgres"`)
}
