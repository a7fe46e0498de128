package environment

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/executor/proc"
	"github.com/azolla/azolla/internal/executor/sandbox"
)

// DefaultBudget bounds one setup when none is configured.
const DefaultBudget = 30 * time.Minute

// Manager prepares repositories' environments on this host.
type Manager struct {
	Store *Store
	// Config is a repository's setup configuration.
	Config func(repository string) Config
	// Setup is the executor of a repository's setup commands: its
	// network, the variables it is passed, its binds.
	Setup func(repository string) *sandbox.Executor
	// Budget bounds one repository's setup; nil or 0: DefaultBudget.
	Budget func(repository string) time.Duration
	// Environ is the worker's environment, where a preset's PassEnv is
	// read; nil: os.Environ().
	Environ []string
}

// Source is the base commit as setup needs it: its files to read, and a
// checkout of it to run setup in.
type Source interface {
	Tree
	// Export writes the commit's files into dir, which exists and is empty.
	Export(ctx context.Context, dir string) error
}

// Prepare returns repository's environment for the base commit src, built
// on this host first if it is missing. A setup that fails is a
// *SetupError. Close the environment when the run is over.
func (m *Manager) Prepare(ctx context.Context, repository string, src Source) (*Env, error) {
	if m == nil {
		return &Env{Spec: Spec{Preset: PresetNone}, Warm: true}, nil
	}
	var cfg Config
	if m.Config != nil {
		cfg = m.Config(repository)
	}
	spec, err := Resolve(ctx, cfg, src)
	if err != nil {
		return nil, fmt.Errorf("environment of %s: %w", repository, err)
	}
	return m.Store.Ensure(ctx, repository, spec, func(ctx context.Context, dir string) (string, error) {
		return m.build(ctx, repository, spec, src, dir)
	})
}

// build runs spec's setup for repository in a checkout of src, filling
// dir's caches.
func (m *Manager) build(ctx context.Context, repository string, spec Spec, src Source, dir string) (string, error) {
	budget := DefaultBudget
	if m.Budget != nil && m.Budget(repository) > 0 {
		budget = m.Budget(repository)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, budget, errSetupBudget)
	defer cancel()
	work := filepath.Join(dir, "source")
	if err := os.MkdirAll(work, 0o755); err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	if err := src.Export(ctx, work); err != nil {
		return "", fmt.Errorf("check out the base commit for setup: %w", err)
	}
	x, vars := m.setupExtra(spec, dir)
	var ex *sandbox.Executor
	if m.Setup != nil {
		ex = m.Setup(repository)
	}
	if ex == nil {
		return "", fmt.Errorf("repository %s: no executor for its setup", repository)
	}
	ex, err := ex.With(x)
	if err != nil {
		return "", err
	}
	run, err := ex.Begin()
	if err != nil {
		return "", err
	}
	defer run.End()
	commands := slices.Clone(spec.Commands)
	if spec.Script != nil {
		script := run.Path("repository-setup.sh")
		if err := os.WriteFile(script, spec.Script, 0o600); err != nil {
			return "", err
		}
		vars = append(vars, "AZOLLA_SETUP_SCRIPT="+script)
		commands = append(commands, `sh "$AZOLLA_SETUP_SCRIPT"`)
	}
	for _, c := range commands {
		if err := m.exec(ctx, run, work, c, vars, budget); err != nil {
			return "", err
		}
	}
	var failed []string
	for _, c := range spec.Warm {
		if err := m.exec(ctx, run, work, c, vars, budget); err != nil {
			var se *SetupError
			if !errors.As(err, &se) {
				return "", err
			}
			failed = append(failed, fmt.Sprintf("warm-up %q %s (the base commit may not build; runs compile what they need)",
				se.Command, se.Outcome))
		}
	}
	for from, to := range spec.Keep {
		dst := filepath.Join(dir, "caches", to)
		if err := os.RemoveAll(dst); err != nil {
			return "", err
		}
		if err := os.Rename(filepath.Join(work, from), dst); err != nil {
			return "", &SetupError{Command: strings.Join(commands, " && "), Outcome: "left no " + from,
				Fix: "the setup commands must make " + from + " at the repository's root"}
		}
	}
	return strings.Join(failed, "; "), nil
}

// errSetupBudget is the cause of a setup's context when its budget ends.
var errSetupBudget = errors.New("setup budget exhausted")

// setupTail is how much of a failing setup command's output is kept.
const setupTail = 4 << 10

// exec runs one setup command in work.
func (m *Manager) exec(ctx context.Context, run *sandbox.Run, work, command string, vars []string,
	budget time.Duration) error {
	out := &proc.TailBuffer{Max: setupTail}
	res, err := run.Exec(ctx, sandbox.Command{Line: command, Dir: work, Vars: vars, Stdout: out, Stderr: out})
	switch {
	case err != nil && errors.Is(context.Cause(ctx), errSetupBudget):
		return &SetupError{Command: command, Outcome: fmt.Sprintf("did not finish within the setup budget of %s", budget),
			Tail: out.Text(), Fix: "make setup faster, or raise patch.repositories[].setup.budget"}
	case err != nil:
		return fmt.Errorf("setup command %q: %w", command, err)
	case res.ExitCode != 0 || res.Signal != 0:
		outcome := fmt.Sprintf("%s after %s", res.Status(), res.Duration.Round(time.Millisecond))
		if why := res.Explain(); why != "" {
			outcome += " (" + why + ")"
		}
		return &SetupError{Command: command, Outcome: outcome, Tail: out.Text(), Fix: setupFix(res.ExitCode)}
	}
	return nil
}

// setupFix says what to change after a setup command failed with code.
func setupFix(code int) string {
	if code == 126 || code == 127 {
		return "the setup command could not start: install the tool on the worker, or bind it " +
			"(patch.repositories[].setup.binds), or set setup.commands, or setup.preset: none"
	}
	return "fix what the output says (a dependency the worker cannot fetch: setup.pass_env or setup.env for a " +
		"proxy or index; credentials: setup.secret_env), or set setup.commands, or setup.preset: none"
}

// setupExtra is what setup runs get: every cache of dir writable, the
// variables pointing at them, the preset's variables, and the worker's
// variables the preset reads; and the AZOLLA_CACHE_<NAME> descriptors
// custom commands find the caches by.
func (m *Manager) setupExtra(spec Spec, dir string) (sandbox.Extra, []string) {
	paths := map[string]string{}
	for _, c := range spec.Caches {
		paths[c.Name] = filepath.Join(dir, "caches", c.Name)
	}
	expand := expander(paths, filepath.Join(dir, "source"))
	x := sandbox.Extra{Binds: []sandbox.Bind{{Path: dir, Writable: true}}}
	env := map[string]string{}
	environ := m.Environ
	if environ == nil {
		environ = os.Environ()
	}
	for _, n := range spec.PassEnv {
		if v, ok := lookupEnv(environ, n); ok {
			env[n] = v
			x.Binds = append(x.Binds, localSources(v)...)
		}
	}
	for _, c := range spec.Caches {
		if c.Env != "" {
			env[c.Env] = paths[c.Name]
		}
	}
	for _, m := range []map[string]string{spec.Env, spec.SetupEnv} {
		for k, v := range m {
			env[k] = expand(v)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		x.Env = append(x.Env, k+"="+env[k])
	}
	for _, p := range spec.Path {
		x.PathPrefix = append(x.PathPrefix, expand(p))
	}
	var vars []string
	for _, c := range spec.Caches {
		vars = append(vars, CacheVar(c.Name)+"="+paths[c.Name])
	}
	return x, vars
}

// CacheVar is the descriptor that names cache name's directory in setup:
// AZOLLA_CACHE_ and its name in capitals, anything but letters and digits
// an underscore.
func CacheVar(name string) string {
	return "AZOLLA_CACHE_" + strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, name)
}

// localSources are the local directories a passed variable names, such as
// a file:// module proxy or a directory of wheels: setup sees them
// read-only, wherever they are, since they are where it is told to fetch
// from.
func localSources(v string) []sandbox.Bind {
	var out []sandbox.Bind
	for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == '|' || r == ' ' }) {
		p := strings.TrimPrefix(part, "file://")
		if !filepath.IsAbs(p) || filepath.Clean(p) != p || p == "/" {
			continue
		}
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			out = append(out, sandbox.Bind{Path: p})
		}
	}
	return out
}

func lookupEnv(environ []string, name string) (string, bool) {
	for i := len(environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(environ[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// SetupError is a setup command that failed: the environment's failure,
// not the agent's.
type SetupError struct {
	// Command is the command as configured (or the preset's).
	Command string
	// Outcome says how it ended: "exited with status 1 after 2.1s".
	Outcome string
	// Tail is the end of what it printed.
	Tail string
	// Fix says what to change.
	Fix string
}

func (e *SetupError) Error() string {
	return fmt.Sprintf("setup: %q %s", firstLine(e.Command), e.Outcome)
}

// Report is the error with the output's tail and the fix, for a run's
// notes and a pause.
func (e *SetupError) Report() string {
	var b strings.Builder
	b.WriteString(e.Error())
	if t := strings.TrimRight(e.Tail, "\n"); t != "" {
		b.WriteString("\noutput tail:\n")
		b.WriteString(t)
	}
	if e.Fix != "" {
		b.WriteString("\nfix: ")
		b.WriteString(e.Fix)
	}
	return b.String()
}

func firstLine(s string) string {
	line, rest, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if rest != "" {
		line += " …"
	}
	return line
}
