package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

type result struct {
	code           int
	stdout, stderr string
}

// azolla runs the command line in-process with only env as its environment;
// HOME is a fresh temp dir unless env sets it, so no real data dir is read.
func azolla(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	full := map[string]string{"HOME": t.TempDir()}
	for k, v := range env {
		full[k] = v
	}
	var stdout, stderr bytes.Buffer
	code := Run(t.Context(), args, &stdout, &stderr, func(k string) string { return full[k] })
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// writeFile writes content to name in dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o750))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}
