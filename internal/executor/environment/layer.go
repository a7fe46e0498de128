package environment

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/azolla/azolla/internal/executor/sandbox"
)

// Layer is what one run of an agent or a gate command gets of an
// environment: its caches bound in, its variables, and copies of its own
// of the caches it writes. Close removes them.
type Layer struct {
	// Extra is what the run's executor adds (sandbox.Executor.With).
	Extra sandbox.Extra
	dir   string
	links []string
}

// Layer makes a run's layer for work in worktree.
func (e *Env) Layer(ctx context.Context, worktree string) (*Layer, error) {
	l := &Layer{}
	if e == nil || e.Spec.None() {
		return l, nil
	}
	paths := map[string]string{}
	for _, c := range e.Spec.Caches {
		if c.SetupOnly {
			continue
		}
		src := e.CacheDir(c.Name)
		if !c.Writable {
			paths[c.Name] = src
			l.Extra.Binds = append(l.Extra.Binds, sandbox.Bind{Path: src})
			continue
		}
		if l.dir == "" {
			if err := os.MkdirAll(e.layers, 0o700); err != nil {
				return nil, fmt.Errorf("environment layer: %w", err)
			}
			dir, err := os.MkdirTemp(e.layers, "run-")
			if err != nil {
				return nil, fmt.Errorf("environment layer: %w", err)
			}
			l.dir = dir
		}
		dst := filepath.Join(l.dir, c.Name)
		if err := copyTree(ctx, src, dst); err != nil {
			_ = l.Close()
			return nil, fmt.Errorf("environment layer: copy cache %s: %w", c.Name, err)
		}
		paths[c.Name] = dst
		l.Extra.Binds = append(l.Extra.Binds, sandbox.Bind{Path: dst, Writable: true})
	}
	expand := expander(paths, worktree)
	env := map[string]string{}
	for _, c := range e.Spec.Caches {
		if p, ok := paths[c.Name]; ok && c.Env != "" {
			env[c.Env] = p
		}
	}
	for k, v := range e.Spec.Env {
		env[k] = expand(v)
	}
	for k, v := range e.Spec.RunEnv {
		env[k] = expand(v)
	}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		l.Extra.Env = append(l.Extra.Env, k+"="+env[k])
	}
	for _, p := range e.Spec.Path {
		l.Extra.PathPrefix = append(l.Extra.PathPrefix, expand(p))
	}
	for _, name := range slices.Sorted(maps.Keys(e.Spec.Links)) {
		if err := l.link(worktree, name, expand(e.Spec.Links[name])); err != nil {
			_ = l.Close()
			return nil, err
		}
	}
	return l, nil
}

// link points worktree/name at target unless the worktree has a name of
// its own, and keeps it out of git's sight (the workspace's
// .git/info/exclude), so that it is never part of a patch.
func (l *Layer) link(worktree, name, target string) error {
	at := filepath.Join(worktree, name)
	if _, err := os.Lstat(at); err == nil {
		return nil // the repository's own, or a link an earlier layer left
	}
	if err := os.Symlink(target, at); err != nil {
		return fmt.Errorf("environment layer: link %s: %w", name, err)
	}
	l.links = append(l.links, at)
	exclude := filepath.Join(worktree, ".git", "info", "exclude")
	raw, err := os.ReadFile(exclude)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("environment layer: %w", err)
	}
	line := "/" + name
	if slices.Contains(strings.Split(string(raw), "\n"), line) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(exclude), 0o755); err != nil {
		return fmt.Errorf("environment layer: %w", err)
	}
	f, err := os.OpenFile(exclude, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("environment layer: %w", err)
	}
	defer f.Close()
	if len(raw) > 0 && !strings.HasSuffix(string(raw), "\n") {
		line = "\n" + line
	}
	_, err = f.WriteString(line + "\n")
	return err
}

// Close removes the layer's copies and links.
func (l *Layer) Close() error {
	if l == nil {
		return nil
	}
	for _, at := range l.links {
		_ = os.Remove(at)
	}
	l.links = nil
	if l.dir == "" {
		return nil
	}
	err := os.RemoveAll(l.dir)
	l.dir = ""
	return err
}

// expander replaces {cache:NAME} with that cache's path and {worktree}
// with worktree.
func expander(paths map[string]string, worktree string) func(string) string {
	pairs := []string{"{worktree}", worktree}
	for name, p := range paths {
		pairs = append(pairs, "{cache:"+name+"}", p)
	}
	r := strings.NewReplacer(pairs...)
	return r.Replace
}

// copyTree copies src to dst (which must not exist) with cp, keeping
// modes and times, by reflink where the file system has them.
func copyTree(ctx context.Context, src, dst string) error {
	out, err := exec.CommandContext(ctx, "cp", "-a", "--reflink=auto", "--", src, dst).CombinedOutput()
	if err != nil {
		return fmt.Errorf("cp: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}
