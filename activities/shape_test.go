package activities_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// maxMethods bounds the methods of a struct of the package, exported and
// not, its own and those its embedded structs lend it: a struct past it
// holds more than one concern (docs/development.md).
const maxMethods = 25

func TestShape_NoStructHasMoreThanMaxMethods(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	own := map[string]int{}
	embeds := map[string][]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		require.NoError(t, err)
		ast.Inspect(file, func(n ast.Node) bool {
			switch d := n.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil {
					own[typeName(d.Recv.List[0].Type)]++
				}
			case *ast.TypeSpec:
				if st, ok := d.Type.(*ast.StructType); ok {
					embeds[d.Name.Name] = []string{}
					for _, field := range st.Fields.List {
						if len(field.Names) == 0 {
							embeds[d.Name.Name] = append(embeds[d.Name.Name], typeName(field.Type))
						}
					}
				}
			}
			return true
		})
	}
	var total func(typ string) int
	total = func(typ string) int {
		n := own[typ]
		for _, e := range embeds[typ] {
			n += total(e)
		}
		return n
	}
	require.Contains(t, embeds, "Steps", "the package's structs were found")
	for typ := range embeds {
		require.LessOrEqual(t, total(typ), maxMethods, "%s has %d methods: split it by concern", typ, total(typ))
	}
}

// typeName is the name of T or *T, a type of the package; "" for other
// type expressions (another package's types are not counted).
func typeName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return typeName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return ""
}
