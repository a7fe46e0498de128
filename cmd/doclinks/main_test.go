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

func TestCheck_CitationsInCodeAreFromTheRoot(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "docs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "docs", "claims.md"), []byte("# Claims\n\n## Releasing\n"), 0o644))
	src := filepath.Join(dir, "pkg", "x.go")
	require.NoError(t, os.MkdirAll(filepath.Dir(src), 0o755))
	require.NoError(t, os.WriteFile(src, []byte("// see docs/claims.md#releasing and docs/claims.md#renewing\n"), 0o644))
	t.Chdir(dir)
	var out strings.Builder
	broken, err := check([]string{"pkg/x.go"}, &out)
	require.NoError(t, err)
	require.Equal(t, 1, broken, out.String())
	require.Contains(t, out.String(), "pkg/x.go:1: docs/claims.md#renewing: no heading")
}
