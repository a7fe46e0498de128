package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// module is the import path every package of the tree starts with.
const module = "github.com/azolla/azolla/"

// tree is what the rules read: the code's Go files (no tests, no
// testdata), parsed with their comments, by folder.
type tree struct {
	root  string
	fset  *token.FileSet
	dirs  map[string][]*file // folder, slash-separated from the root
	order []string           // dirs' keys, sorted
}

type file struct {
	path string // from the root
	ast  *ast.File
}

func read(root string) (*tree, error) {
	t := &tree{root: root, fset: token.NewFileSet(), dirs: map[string][]*file{}}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if name := d.Name(); rel != "." && (name == "testdata" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(t.fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		t.dirs[dir] = append(t.dirs[dir], &file{path: rel, ast: f})
		return nil
	})
	if err != nil {
		return nil, err
	}
	for d := range t.dirs {
		t.order = append(t.order, d)
	}
	sort.Strings(t.order)
	return t, nil
}

// under lists the folders at or below dir.
func (t *tree) under(dir string) []string {
	var out []string
	for _, d := range t.order {
		if d == dir || strings.HasPrefix(d, dir+"/") {
			out = append(out, d)
		}
	}
	return out
}

// imports lists each import of the files at or below dir, as "file
// imports path".
func (t *tree) imports(dir string) []imported {
	var out []imported
	for _, d := range t.under(dir) {
		for _, f := range t.dirs[d] {
			for _, is := range f.ast.Imports {
				p, err := strconv.Unquote(is.Path.Value)
				if err == nil {
					out = append(out, imported{file: f.path, path: p})
				}
			}
		}
	}
	return out
}

type imported struct {
	file, path string
}

// subfolders lists the folders directly under dir on disk, Go or not.
func (t *tree) subfolders(dir string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(t.root, dir))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out, nil
}
