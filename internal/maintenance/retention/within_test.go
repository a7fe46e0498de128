package retention

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWithin_RefusesEveryNameThatIsNotAPlainEntry(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ps := &pass{root: root}
	for _, name := range []string{"", ".", "..", "../x", "a/b", "/etc", "a/../../x"} {
		_, err := ps.within(name)
		require.Error(t, err, "%q", name)
	}
	for _, name := range []string{"wo-a-1", ".wo-a-1.tmp-1", "wo..x", "..x"} {
		path, err := ps.within(name)
		require.NoError(t, err, "%q", name)
		require.Equal(t, filepath.Join(root, name), path)
	}
}
