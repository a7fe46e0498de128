package workflows

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// maxFuncLines bounds a workflow function: the lifecycle reads as named
// steps, each short enough to hold in mind (docs/development.md).
const maxFuncLines = 60

// Every function of the package's code, handlers and phases included, is
// at most maxFuncLines lines long.
func TestShape_NoWorkflowFunctionIsLong(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		require.NoError(t, err)
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			checked++
			lines := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			require.LessOrEqual(t, lines, maxFuncLines, "%s: %s is %d lines: split it into named steps", f, fn.Name.Name, lines)
		}
	}
	require.Greater(t, checked, 20, "the package's functions were found")
}
