package schemas

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/stretchr/testify/require"
)

// Every kind's schema is compiled on its first use. When several
// goroutines use each kind for the first time at once, each kind is
// compiled once, every goroutine gets that schema, and it accepts the
// kind's first valid fixture while other kinds are still being compiled. Under
// -race this also checks that the compiler, which is not safe for
// concurrent use, is never used by two goroutines at once.
func TestSchemaSet_FirstUseConcurrently(t *testing.T) {
	t.Parallel()
	set := newSchemaSet()
	const perKind = 4
	type result struct {
		schema *jsonschema.Schema
		err    error
	}
	results := make([][perKind]result, len(allKinds))
	docs := make([]any, len(allKinds))
	for i, k := range allKinds {
		valid, err := filepath.Glob(filepath.Join("testdata", string(k), "valid*.json"))
		require.NoError(t, err)
		require.NotEmpty(t, valid, "kind %s has no valid fixture", k)
		data, err := os.ReadFile(valid[0])
		require.NoError(t, err)
		docs[i], err = decode(data)
		require.NoError(t, err, "kind %s", k)
	}

	var wg sync.WaitGroup
	for i, k := range allKinds {
		for j := range perKind {
			wg.Go(func() {
				s := set[k]()
				results[i][j] = result{s, s.Validate(docs[i])}
			})
		}
	}
	wg.Wait()

	for i, k := range allKinds {
		first := results[i][0].schema
		require.NotNil(t, first, "kind %s", k)
		for j, r := range results[i] {
			require.Same(t, first, r.schema, "kind %s, goroutine %d got another schema", k, j)
			require.NoError(t, r.err, "kind %s, goroutine %d", k, j)
		}
	}
}
