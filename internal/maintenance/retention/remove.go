package retention

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// within is the path of the workspaces entry name, refused unless it is a
// plain name directly in the workspaces directory.
func (ps *pass) within(name string) (string, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, filepath.Separator) {
		return "", fmt.Errorf("%q is not a plain entry name", name)
	}
	path := filepath.Join(ps.root, name)
	if filepath.Dir(path) != ps.root {
		return "", fmt.Errorf("%q resolves outside %s", name, ps.root)
	}
	return path, nil
}

// remove deletes a pruned entry. It looks at the entry again first: only a
// real directory directly in the workspaces directory goes. os.RemoveAll
// unlinks symbolic links it meets inside and never follows them.
func (ps *pass) remove(e *Entry) error {
	path, err := ps.within(e.Name)
	if err != nil {
		return err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("look at %s: %w", path, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is no longer a directory; left alone", path)
	}
	if err := os.RemoveAll(path); err != nil {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return nil
}
