package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// house writes a small tree in the shape, with extra files over it, and
// returns its root.
func house(t *testing.T, extra map[string]string) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"internal/domain/doc.go":         "// Package domain is the types.\npackage domain\n\nimport _ \"github.com/azolla/azolla/internal/textsafe\"\n",
		"internal/textsafe/textsafe.go":  "// Package textsafe is safe text.\npackage textsafe\n",
		"internal/store/store.go":        "// Package store stores.\npackage store\n\nimport _ \"database/sql\"\n",
		"internal/executor/doc.go":       "// Package executor groups the executors.\npackage executor\n",
		"internal/executor/proc/proc.go": "package proc\n\nimport _ \"github.com/azolla/azolla/internal/domain\"\n",
		"internal/cli/doc.go":            "// Package cli is the command line.\npackage cli\n\nimport _ \"github.com/azolla/azolla/workflows\"\n",
		"workflows/objective.go":         "package workflows\n\nimport _ \"github.com/azolla/azolla/internal/domain\"\n\nfunc Short() {\n}\n",
		"activities/steps.go":            "package activities\n\ntype Steps struct{}\n\n" + methods("Steps", maxMethods),
		// Tests and testdata are not the code's shape.
		"workflows/objective_test.go":  "package workflows\n\nimport _ \"github.com/azolla/azolla/internal/store\"\n",
		"workflows/testdata/x/main.go": "package x\n\nimport _ \"database/sql\"\n",
	}
	for p, text := range extra {
		files[p] = text
	}
	for p, text := range files {
		full := filepath.Join(root, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(text), 0o644))
	}
	return root
}

func methods(recv string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "func (s *%s) M%d() {}\n", recv, i)
	}
	return b.String()
}

func run(t *testing.T, root string) (int, string) {
	t.Helper()
	var out strings.Builder
	n, err := check(root, &out)
	require.NoError(t, err)
	return n, out.String()
}

func TestCheck_TheShapeItselfPasses(t *testing.T) {
	t.Parallel()
	n, out := run(t, house(t, nil))
	require.Zero(t, n, out)
}

func TestCheck_EveryWayOutOfTheShapeIsSaid(t *testing.T) {
	t.Parallel()
	long := "package workflows\n\nfunc Long() {\n" + strings.Repeat("\t_ = 1\n", maxWorkflowLines) + "}\n"
	for name, tc := range map[string]struct {
		extra map[string]string
		want  string
	}{
		"a workflow that imports the store": {map[string]string{
			"workflows/track.go": "package workflows\n\nimport _ \"github.com/azolla/azolla/internal/store/sqlstore\"\n"},
			"workflows/track.go imports github.com/azolla/azolla/internal/store/sqlstore: workflows decide on domain types"},
		"a workflow that imports a database driver": {map[string]string{
			"workflows/track.go": "package workflows\n\nimport _ \"github.com/jackc/pgx/v5\"\n"},
			"workflows/track.go imports github.com/jackc/pgx/v5"},
		"a long workflow function": {map[string]string{"workflows/long.go": long},
			fmt.Sprintf("workflows/long.go: Long is %d lines, at most %d", maxWorkflowLines+2, maxWorkflowLines)},
		"a warehouse in activities": {map[string]string{
			"activities/more.go": "package activities\n\nfunc (s Steps) Extra() {}\n"},
			fmt.Sprintf("activities.Steps has %d methods, at most %d", maxMethods+1, maxMethods)},
		"methods an embedded struct lends count too": {map[string]string{
			"activities/base.go": "package activities\n\ntype Base struct{}\n\nfunc (b *Base) Now() {}\n\ntype Lent struct {\n\t*Base\n}\n\n" + methods("Lent", maxMethods)},
			fmt.Sprintf("activities.Lent has %d methods, at most %d", maxMethods+1, maxMethods)},
		"generic receivers count too": {map[string]string{
			"activities/gen.go": "package activities\n\ntype Box[T any] struct{}\n\n" + strings.ReplaceAll(methods("Box", maxMethods+1), "*Box", "*Box[T]")},
			"activities.Box has 26 methods"},
		"activities importing the workflow SDK": {map[string]string{
			"activities/wf.go": "package activities\n\nimport _ \"go.temporal.io/sdk/workflow\"\n"},
			"activities/wf.go imports go.temporal.io/sdk/workflow: activities never import the workflow SDK"},
		"too many folders under internal": {func() map[string]string {
			m := map[string]string{}
			for i := range maxInternalFolders {
				m[fmt.Sprintf("internal/room%02d/doc.go", i)] = fmt.Sprintf("// Package room%02d is a room.\npackage room%02d\n", i, i)
			}
			return m
		}(), fmt.Sprintf("internal/: %d folders", 5+maxInternalFolders)},
		"a group that does not say what it holds": {map[string]string{
			"internal/misc/misc.go": "package misc\n"},
			"internal/misc/: no package doc comment"},
		"a doc comment in a sub-package only": {map[string]string{
			"internal/things/sub/sub.go": "// Package sub is a sub.\npackage sub\n"},
			"internal/things/: no package doc comment"},
		"the domain standing on the store": {map[string]string{
			"internal/domain/bad.go": "package domain\n\nimport _ \"github.com/azolla/azolla/internal/store\"\n"},
			"internal/domain/bad.go imports github.com/azolla/azolla/internal/store: the domain types stand on nothing"},
		"an executor reading the store": {map[string]string{
			"internal/executor/run/run.go": "package run\n\nimport _ \"github.com/azolla/azolla/internal/store/sqlstore\"\n"},
			"internal/executor/run/run.go imports github.com/azolla/azolla/internal/store/sqlstore: an executor is handed"},
		"an executor knowing Temporal": {map[string]string{
			"internal/executor/run/run.go": "package run\n\nimport _ \"go.temporal.io/sdk/activity\"\n"},
			"internal/executor/run/run.go imports go.temporal.io/sdk/activity"},
		"a lifecycle rule running an executor": {map[string]string{
			"internal/lifecycle/doc.go":       "// Package lifecycle is the rules.\npackage lifecycle\n",
			"internal/lifecycle/rule/rule.go": "package rule\n\nimport _ \"github.com/azolla/azolla/internal/executor/proc\"\n"},
			"internal/lifecycle/rule/rule.go imports github.com/azolla/azolla/internal/executor/proc: the lifecycle's rules"},
		"an internal package using workflows": {map[string]string{
			"internal/store/wf.go": "package store\n\nimport _ \"github.com/azolla/azolla/workflows\"\n"},
			"internal/store/wf.go imports github.com/azolla/azolla/workflows: only the CLI"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			n, out := run(t, house(t, tc.extra))
			require.Equal(t, 1, n, out)
			require.Contains(t, out, tc.want)
		})
	}
}

func TestCheck_ThisRepositoryHasTheShape(t *testing.T) {
	t.Parallel()
	n, out := run(t, "../..")
	require.Zero(t, n, "make lint runs this check too:\n%s", out)
}
