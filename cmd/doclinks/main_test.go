package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheck_FindsBrokenFilesAndAnchors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	write("docs/guide.md", "# Guide\n\n## Running in production (docker)\n\n## Set-up\n\n## Set-up\n")
	readme := write("README.md", strings.Join([]string{
		"[ok](docs/guide.md) [ok](docs/guide.md#running-in-production-docker) [ok](docs/guide.md#set-up-1)",
		"[own](#intro) [web](https://example.com/x#y)",
		"# Intro",
		"[gone](docs/missing.md) [bad anchor](docs/guide.md#operations) [own bad](#nowhere)",
		"```",
		"[in code](nothing.md)",
		"```",
		"`[span](nothing.md)` [dir](docs)",
	}, "\n"))
	var out strings.Builder
	broken, err := check([]string{readme}, &out)
	require.NoError(t, err)
	require.Equal(t, 4, broken, out.String())
	for _, want := range []string{"docs/missing.md: no such file", "docs/guide.md#operations: no heading",
		"#nowhere: no heading", "docs: a directory"} {
		require.Contains(t, out.String(), want)
	}
}

func TestSlugify_AsGitHubDoes(t *testing.T) {
	t.Parallel()
	for title, want := range map[string]string{
		"Running against a real Temporal cluster and PostgreSQL": "running-against-a-real-temporal-cluster-and-postgresql",
		"Production (docker compose)":                            "production-docker-compose",
		"`azolla verify` checks":                                 "azolla-verify-checks",
		"Claims and leases":                                      "claims-and-leases",
	} {
		require.Equal(t, want, slugify(title), title)
	}
}
