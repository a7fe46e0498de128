package atomicfile_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/atomicfile"
)

func TestWriteJSON_WholeFileAndNoTemporaryLeft(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "record.json")
	require.NoError(t, atomicfile.WriteJSON(path, map[string]int{"a": 1}))
	require.NoError(t, atomicfile.WriteJSON(path, map[string]int{"a": 2}))
	var got map[string]int
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &got))
	require.Equal(t, 2, got["a"])
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	require.Len(t, entries, 1, "only the file: its temporaries were renamed or removed")

	require.Error(t, atomicfile.WriteJSON(path, func() {}), "a value JSON cannot hold")
	b2, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, b, b2, "a failed write leaves the file as it was")
}
