package storetest

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

var migrationFile = regexp.MustCompile(`^(\d{4})_[a-z0-9_]+\.sql$`)

// MigrationVersions lists the versions of the migration files in dir (a
// backend's migrations directory, relative to its test), ascending: what a
// fresh database applies. Versions need not be contiguous: a number may be
// reserved for a migration still being written.
func MigrationVersions(t testing.TB, dir string) []int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []int
	for _, e := range entries {
		if m := migrationFile.FindStringSubmatch(e.Name()); m != nil {
			v, err := strconv.Atoi(m[1])
			require.NoError(t, err)
			out = append(out, v)
		}
	}
	slices.Sort(out)
	require.NotEmpty(t, out, "no migrations in %s", dir)
	return out
}
