package sandbox

import (
	"fmt"
	"slices"
	"strings"
)

// Extra is what one run adds to its executor's configuration: a prepared
// environment's caches and variables (package environment), which differ
// per repository and per run where the executor's policy is fixed at
// start.
type Extra struct {
	// Binds are further paths the run sees.
	Binds []Bind
	// Env are KEY=VALUE pairs set after the executor's own variables,
	// which they win over.
	Env []string
	// PathPrefix are directories put before the run's PATH (a virtual
	// environment's bin).
	PathPrefix []string
}

// Check says why x cannot be added to a run: a variable named by the
// rules of CheckName, a bind that is not a clean absolute path.
func (x Extra) Check() error {
	for _, kv := range x.Env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("environment variable %q is not KEY=VALUE", kv)
		}
		if err := CheckName(k); err != nil {
			return err
		}
	}
	for _, b := range x.Binds {
		if err := checkPath(b.Path); err != nil {
			return fmt.Errorf("environment bind: %w", err)
		}
	}
	for _, p := range x.PathPrefix {
		if err := checkPath(p); err != nil || strings.Contains(p, ":") {
			return fmt.Errorf("environment PATH entry %q: must be an absolute clean path without ':'", p)
		}
	}
	return nil
}

// With returns an executor like e whose runs also get x. The caller builds
// x from azolla's own settings (Check refuses what a run may never get).
func (e *Executor) With(x Extra) (*Executor, error) {
	if err := x.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", e.p.Name, err)
	}
	c := *e
	c.p.Binds = slices.Concat(e.p.Binds, x.Binds)
	c.vars = slices.Concat(e.vars, x.Env)
	if len(x.PathPrefix) > 0 {
		base, ok := lookup(c.vars, "PATH")
		if !ok {
			if base, ok = lookup(e.h.environ, "PATH"); !ok {
				base = defaultPath
			}
		}
		c.vars = append(c.vars, "PATH="+strings.Join(append(slices.Clone(x.PathPrefix), base), ":"))
	}
	return &c, nil
}
