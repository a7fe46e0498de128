package main

import (
	"fmt"
	"go/ast"
	"sort"
	"strings"
)

// The bounds of the shape.
const (
	maxInternalFolders = 15
	maxMethods         = 25
	maxWorkflowLines   = 60
)

// A rule reads the tree and says each way it is broken, one line each.
type rule func(*tree) []string

var rules = []rule{
	internalFolders,
	groupsSayWhatTheyHold,
	workflowsStoreNothing,
	workflowFunctionsAreShort,
	activityTypesAreSmall,
	layer{dir: "internal/domain", why: "the domain types stand on nothing of azolla's but textsafe",
		forbid: []match{prefix(module)},
		allow:  []match{prefix(module + "internal/domain"), prefix(module + "internal/textsafe")}}.check,
	layer{dir: "activities", why: "activities never import the workflow SDK",
		forbid: []match{prefix("go.temporal.io/sdk/workflow")}}.check,
	layer{dir: "internal/executor", why: "an executor is handed what it needs: it reads no store, asks no lifecycle rule and knows no remote path",
		forbid: []match{prefix(module + "internal/store"), prefix(module + "internal/lifecycle"),
			prefix(module + "internal/remote"), prefix(module + "internal/cli"), prefix("go.temporal.io/")}}.check,
	layer{dir: "internal/lifecycle", why: "the lifecycle's rules run no executor, remote path or forge",
		forbid: []match{prefix(module + "internal/executor"), prefix(module + "internal/remote"),
			prefix(module + "internal/forge"), prefix(module + "internal/cli"), prefix("go.temporal.io/")}}.check,
	layer{dir: "internal", but: "internal/cli", why: "only the CLI, under internal/, uses the Temporal-facing packages",
		forbid: []match{prefix(module + "activities"), prefix(module + "workflows"), prefix(module + "workers"),
			prefix(module + "starter")}}.check,
}

// storage is every package that reads or writes a database.
var storage = []match{
	prefix(module + "internal/store"), prefix("database/sql"), prefix("github.com/jackc/"),
	prefix("modernc.org/sqlite"), prefix("github.com/redis/"),
}

func internalFolders(t *tree) []string {
	dirs, err := t.subfolders("internal")
	if err != nil {
		return []string{"internal/: " + err.Error()}
	}
	if len(dirs) > maxInternalFolders {
		return []string{fmt.Sprintf("internal/: %d folders (%s), at most %d: group them by what they are for",
			len(dirs), strings.Join(dirs, ", "), maxInternalFolders)}
	}
	return nil
}

func groupsSayWhatTheyHold(t *tree) []string {
	dirs, err := t.subfolders("internal")
	if err != nil {
		return nil // internalFolders says so
	}
	var out []string
	for _, d := range dirs {
		dir := "internal/" + d
		said := false
		for _, f := range t.dirs[dir] {
			if f.ast.Doc != nil && strings.HasPrefix(f.ast.Doc.Text(), "Package ") {
				said = true
			}
		}
		if !said {
			out = append(out, dir+"/: no package doc comment says what lives there and what it may import (write a doc.go)")
		}
	}
	return out
}

func workflowsStoreNothing(t *tree) []string {
	var out []string
	for _, im := range t.imports("workflows") {
		for _, m := range storage {
			if m(im.path) {
				out = append(out, fmt.Sprintf("%s imports %s: workflows decide on domain types and store nothing", im.file, im.path))
			}
		}
	}
	return out
}

func workflowFunctionsAreShort(t *tree) []string {
	var out []string
	for _, f := range t.dirs["workflows"] {
		for _, d := range f.ast.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			lines := t.fset.Position(fn.End()).Line - t.fset.Position(fn.Pos()).Line + 1
			if lines > maxWorkflowLines {
				out = append(out, fmt.Sprintf("%s: %s is %d lines, at most %d: split it into named steps",
					f.path, fn.Name.Name, lines, maxWorkflowLines))
			}
		}
	}
	return out
}

// activityTypesAreSmall counts each type's method set as the package
// declares it: its own methods and those its embedded types (of the same
// package) lend it.
func activityTypesAreSmall(t *tree) []string {
	var out []string
	for _, d := range t.under("activities") {
		own := map[string]int{}
		embeds := map[string][]string{}
		for _, f := range t.dirs[d] {
			ast.Inspect(f.ast, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.FuncDecl:
					if x.Recv != nil && len(x.Recv.List) > 0 {
						own[receiver(x.Recv.List[0].Type)]++
					}
				case *ast.TypeSpec:
					embeds[x.Name.Name] = nil
					if st, ok := x.Type.(*ast.StructType); ok {
						for _, field := range st.Fields.List {
							if len(field.Names) == 0 {
								embeds[x.Name.Name] = append(embeds[x.Name.Name], receiver(field.Type))
							}
						}
					}
				}
				return true
			})
		}
		var total func(typ string, depth int) int
		total = func(typ string, depth int) int {
			n := own[typ]
			if depth < 8 { // a loop of embedding does not compile; the bound only guards this reader
				for _, e := range embeds[typ] {
					n += total(e, depth+1)
				}
			}
			return n
		}
		for typ := range embeds {
			if n := total(typ, 0); n > maxMethods {
				out = append(out, fmt.Sprintf("%s.%s has %d methods, at most %d: split it by concern, each with the dependencies it uses",
					d, typ, n, maxMethods))
			}
		}
	}
	sort.Strings(out)
	return out
}

// receiver names a method's receiver type: T of T, *T, T[P] or *T[P].
func receiver(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return "?"
		}
	}
}

// A match says whether an import path is one a rule is about.
type match func(path string) bool

// prefix matches the package p and those below it; a p ending in "/"
// matches every path that starts with it.
func prefix(p string) match {
	return func(path string) bool {
		if strings.HasSuffix(p, "/") {
			return strings.HasPrefix(path, p)
		}
		return path == p || strings.HasPrefix(path, p+"/")
	}
}

// A layer is a rule: no file at or below dir (but the folder but, and
// what is below it) imports a path forbid matches, unless allow matches
// it too.
type layer struct {
	dir, but, why string
	forbid        []match
	allow         []match
}

func (l layer) check(t *tree) []string {
	var out []string
	for _, im := range t.imports(l.dir) {
		if l.but != "" && strings.HasPrefix(im.file, l.but+"/") {
			continue
		}
		if anyOf(l.allow, im.path) || !anyOf(l.forbid, im.path) {
			continue
		}
		out = append(out, fmt.Sprintf("%s imports %s: %s", im.file, im.path, l.why))
	}
	return out
}

func anyOf(ms []match, path string) bool {
	for _, m := range ms {
		if m(path) {
			return true
		}
	}
	return false
}
