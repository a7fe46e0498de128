package environment_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/environment"
	"github.com/azolla/azolla/internal/executor/sandbox"
	"github.com/azolla/azolla/internal/executor/sandbox/sandboxtest"
)

// source is a base commit held in memory: files at the root only.
type source map[string]string

func (s source) Root(context.Context) ([]string, error) { return slices.Sorted(maps.Keys(s)), nil }

func (s source) Read(_ context.Context, p string) ([]byte, error) {
	if v, ok := s[p]; ok {
		return []byte(v), nil
	}
	return nil, fmt.Errorf("%s: %w", p, environment.ErrNoFile)
}

func (s source) Export(_ context.Context, dir string) error {
	for name, content := range s {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

type testBundle struct {
	root    string
	manager *environment.Manager
	configs map[string]environment.Config
	mu      sync.Mutex
}

// setup is a manager on a fresh root whose setups run on mode's host.
func setup(t *testing.T, mode sandbox.Mode) *testBundle {
	t.Helper()
	if mode == sandbox.ModeBwrap {
		sandboxtest.RequireBwrap(t)
	}
	root := t.TempDir()
	h, err := sandbox.New(sandbox.Options{Mode: mode, RunsDir: filepath.Join(root, "runs"),
		Environ: []string{"PATH=" + os.Getenv("PATH"), "PIP_INDEX_URL=https://pip.example/simple"}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, h.Close()) })
	ex, err := h.Executor(sandbox.Policy{Name: "patch.repositories[0].setup"}, nil)
	require.NoError(t, err)
	b := &testBundle{root: root, configs: map[string]environment.Config{}}
	b.manager = &environment.Manager{
		Store: &environment.Store{Root: filepath.Join(root, "environments")},
		Config: func(repo string) environment.Config {
			b.mu.Lock()
			defer b.mu.Unlock()
			return b.configs[repo]
		},
		Setup:   func(string) *sandbox.Executor { return ex },
		Environ: []string{"PIP_INDEX_URL=https://pip.example/simple"},
	}
	return b
}

func (b *testBundle) configure(repo string, c environment.Config) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.configs[repo] = c
}

func resolve(t *testing.T, cfg environment.Config, src source) environment.Spec {
	t.Helper()
	s, err := environment.Resolve(context.Background(), cfg, src)
	require.NoError(t, err)
	return s
}

func TestResolve_AutoPicksThePresetOfTheRootsFiles(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		files  source
		preset string
		first  string // the first setup command's start
	}{
		{"go", source{"go.mod": "module x", "go.sum": ""}, environment.PresetGo, "go mod download"},
		{"npm", source{"package.json": "{}", "package-lock.json": "{}"}, environment.PresetNode, "npm ci"},
		{"pnpm", source{"package.json": "{}", "pnpm-lock.yaml": ""}, environment.PresetNode, "pnpm install"},
		{"yarn", source{"package.json": "{}", "yarn.lock": ""}, environment.PresetNode, "yarn install"},
		{"requirements", source{"requirements.txt": "six"}, environment.PresetPython, "set -e"},
		{"pyproject", source{"pyproject.toml": "[project]"}, environment.PresetPython, "set -e"},
		{"rust", source{"Cargo.toml": "", "Cargo.lock": ""}, environment.PresetRust, "cargo fetch"},
		{"nothing to set up", source{"README.md": "hi", "main.c": ""}, environment.PresetNone, ""},
		{"a package.json without a lockfile", source{"package.json": "{}"}, environment.PresetNone, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := resolve(t, environment.Config{}, tc.files)
			require.Equal(t, tc.preset, s.Preset)
			if tc.first == "" {
				require.True(t, s.None())
				return
			}
			require.True(t, strings.HasPrefix(s.Commands[0], tc.first), s.Commands[0])
			require.Len(t, s.Key, 32)
		})
	}
}

func TestResolve_TheKeyFollowsTheKeyFilesAndTheCommandsOnly(t *testing.T) {
	t.Parallel()
	base := source{"go.mod": "module x\n", "go.sum": "a v1 h1:x\n", "main.go": "package main"}
	key := resolve(t, environment.Config{}, base).Key
	other := maps.Clone(base)
	other["main.go"] = "package main // changed"
	require.Equal(t, key, resolve(t, environment.Config{}, other).Key, "code is not what the environment is made of")
	other["go.sum"] = "a v2 h1:y\n"
	require.NotEqual(t, key, resolve(t, environment.Config{}, other).Key, "a dependency changed")
	require.NotEqual(t, key, resolve(t, environment.Config{Commands: []string{"go mod download -x"}}, base).Key)
	require.NotEqual(t, key, resolve(t, environment.Config{Env: map[string]string{"GOFLAGS": "-tags=x"}}, base).Key)
	require.Equal(t, key, resolve(t, environment.Config{}, base).Key, "the same inputs, the same key")
}

func TestResolve_TheRepositorysScriptOnlyWhenTrusted(t *testing.T) {
	t.Parallel()
	src := source{"README.md": "", environment.RepositoryScript: "echo from the repository\n"}
	require.True(t, resolve(t, environment.Config{}, src).None(), "not trusted: not read")
	s := resolve(t, environment.Config{FromRepository: true}, src)
	require.Equal(t, environment.PresetCustom, s.Preset)
	require.Equal(t, "echo from the repository\n", string(s.Script))
	changed := maps.Clone(src)
	changed[environment.RepositoryScript] = "echo changed\n"
	require.NotEqual(t, s.Key, resolve(t, environment.Config{FromRepository: true}, changed).Key)
}

func TestPrepare_BuildsOnceAndThenIsWarm(t *testing.T) {
	t.Parallel()
	b := setup(t, sandbox.ModeNone)
	ctx := context.Background()
	b.configure("repo", environment.Config{Commands: []string{`echo built >> "$AZOLLA_CACHE_DATA/count"; echo "$PIP_INDEX_URL" > "$AZOLLA_CACHE_DATA/index"`},
		Caches: []environment.Cache{{Name: "data", Env: "DATA_DIR"}}, KeyFiles: []string{"lock.txt"}})
	src := source{"lock.txt": "v1"}

	const n = 4
	envs := make([]*environment.Env, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { envs[i], errs[i] = b.manager.Prepare(ctx, "repo", src) })
	}
	wg.Wait()
	built := 0
	for i := range n {
		require.NoError(t, errs[i])
		if !envs[i].Warm {
			built++
		}
		require.NoError(t, envs[i].Close())
	}
	require.Equal(t, 1, built, "one of the racing runs built it, the others found it ready")
	count, err := os.ReadFile(filepath.Join(envs[0].CacheDir("data"), "count"))
	require.NoError(t, err)
	require.Equal(t, "built\n", string(count), "setup ran once")

	again, err := b.manager.Prepare(ctx, "repo", src)
	require.NoError(t, err)
	defer again.Close()
	require.True(t, again.Warm)
	require.Contains(t, again.Note(), "environment warm: custom environment")
	_, err = os.Stat(filepath.Join(again.Dir, "source"))
	require.True(t, os.IsNotExist(err), "the setup's checkout is gone")

	changed, err := b.manager.Prepare(ctx, "repo", source{"lock.txt": "v2"})
	require.NoError(t, err)
	defer changed.Close()
	require.False(t, changed.Warm, "another lockfile, another environment")
}

func TestPrepare_AFailedSetupIsASetupErrorAndLeavesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, sandbox.ModeNone)
	ctx := context.Background()
	b.configure("repo", environment.Config{Commands: []string{"echo fetching; echo 'module not found' >&2; exit 3"}})
	_, err := b.manager.Prepare(ctx, "repo", source{"x": ""})
	var se *environment.SetupError
	require.ErrorAs(t, err, &se)
	require.Contains(t, se.Error(), `setup: "echo fetching; echo 'module not found' >&2; exit 3" exited with status 3`)
	require.Contains(t, se.Report(), "module not found")
	require.Contains(t, se.Report(), "fix: ")
	entries, err := filepath.Glob(filepath.Join(b.root, "environments", "*", "*", "meta.json"))
	require.NoError(t, err)
	require.Empty(t, entries, "nothing is ready")

	b.configure("repo", environment.Config{Commands: []string{"no-such-tool-azolla --version"}})
	_, err = b.manager.Prepare(ctx, "repo", source{"x": ""})
	require.ErrorAs(t, err, &se)
	require.Contains(t, se.Fix, "could not start")

	b.configure("repo", environment.Config{Commands: []string{"true"}})
	env, err := b.manager.Prepare(ctx, "repo", source{"x": ""})
	require.NoError(t, err, "a fixed configuration builds")
	require.NoError(t, env.Close())
}

func TestLayer_RunsWriteTheirOwnCopyAndSeeTheRestReadOnly(t *testing.T) {
	t.Parallel()
	b := setup(t, sandbox.ModeNone)
	ctx := context.Background()
	b.configure("repo", environment.Config{Commands: []string{
		`echo warm > "$AZOLLA_CACHE_BUILD/entry"; echo dep > "$AZOLLA_CACHE_DEPS/dep"`},
		Caches: []environment.Cache{{Name: "build", Env: "BUILD_CACHE", Writable: true}, {Name: "deps", Env: "DEPS"},
			{Name: "dl", Env: "DL", SetupOnly: true}}})
	env, err := b.manager.Prepare(ctx, "repo", source{"x": ""})
	require.NoError(t, err)
	defer env.Close()

	l, err := env.Layer(ctx, t.TempDir())
	require.NoError(t, err)
	vars := map[string]string{}
	for _, kv := range l.Extra.Env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	require.Equal(t, env.CacheDir("deps"), vars["DEPS"], "read-only caches are seen where they are")
	require.NotEqual(t, env.CacheDir("build"), vars["BUILD_CACHE"], "a written cache is a copy")
	require.NotContains(t, vars, "DL", "a setup-only cache is not the run's")
	require.Contains(t, l.Extra.Binds, sandbox.Bind{Path: env.CacheDir("deps")})
	require.Contains(t, l.Extra.Binds, sandbox.Bind{Path: vars["BUILD_CACHE"], Writable: true})
	warm, err := os.ReadFile(filepath.Join(vars["BUILD_CACHE"], "entry"))
	require.NoError(t, err)
	require.Equal(t, "warm\n", string(warm), "the copy starts warm")
	require.NoError(t, os.WriteFile(filepath.Join(vars["BUILD_CACHE"], "entry"), []byte("poisoned\n"), 0o644))
	require.NoError(t, l.Close())
	_, err = os.Stat(vars["BUILD_CACHE"])
	require.True(t, errors.Is(err, os.ErrNotExist), "the copy goes with the run")
	kept, err := os.ReadFile(filepath.Join(env.CacheDir("build"), "entry"))
	require.NoError(t, err)
	require.Equal(t, "warm\n", string(kept), "one run cannot poison the next")
}

func TestLayer_LinksNodeModulesOutOfGitsSight(t *testing.T) {
	t.Parallel()
	b := setup(t, sandbox.ModeNone)
	ctx := context.Background()
	b.configure("repo", environment.Config{Preset: environment.PresetNode,
		Commands: []string{"mkdir -p node_modules/.bin && echo lib > node_modules/lib.js"}})
	env, err := b.manager.Prepare(ctx, "repo", source{"package.json": "{}", "package-lock.json": "{}"})
	require.NoError(t, err)
	defer env.Close()
	lib, err := os.ReadFile(filepath.Join(env.CacheDir("node_modules"), "lib.js"))
	require.NoError(t, err, "setup's node_modules moved into the environment")
	require.Equal(t, "lib\n", string(lib))

	wt := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(wt, ".git", "info"), 0o755))
	l, err := env.Layer(ctx, wt)
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join(wt, "node_modules", "lib.js"))
	require.NoError(t, err)
	require.Equal(t, "lib\n", string(got))
	exclude, err := os.ReadFile(filepath.Join(wt, ".git", "info", "exclude"))
	require.NoError(t, err)
	require.Contains(t, string(exclude), "/node_modules\n")
	require.Equal(t, []string{env.CacheDir("node_modules") + "/.bin"}, l.Extra.PathPrefix)
	require.NoError(t, l.Close())
	_, err = os.Lstat(filepath.Join(wt, "node_modules"))
	require.True(t, os.IsNotExist(err))
}

func TestStore_PruneEvictsTheLeastRecentlyUsedPastTheCap(t *testing.T) {
	t.Parallel()
	b := setup(t, sandbox.ModeNone)
	ctx := context.Background()
	b.manager.Store.MaxBytes = func(string) int64 { return 1500 }
	b.configure("repo", environment.Config{Commands: []string{`head -c 1000 /dev/zero > "$AZOLLA_CACHE_DATA/blob"`},
		Caches: []environment.Cache{{Name: "data"}}, KeyFiles: []string{"lock"}})
	first, err := b.manager.Prepare(ctx, "repo", source{"lock": "1"})
	require.NoError(t, err)
	require.NoError(t, first.Close())
	inUse, err := b.manager.Prepare(ctx, "repo", source{"lock": "2"})
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(first.Dir, "meta.json"))
	require.True(t, os.IsNotExist(err), "the older one went past the cap")

	third, err := b.manager.Prepare(ctx, "repo", source{"lock": "3"})
	require.NoError(t, err)
	defer third.Close()
	_, err = os.Stat(filepath.Join(inUse.Dir, "meta.json"))
	require.NoError(t, err, "one in use stays, over the cap")
	require.NoError(t, inUse.Close())
	// A process another test forks at that moment holds a copy of the
	// lock's descriptor until it execs, and with it the lock: that pass
	// keeps the environment, the next evicts it.
	var usage []environment.Usage
	require.Eventually(t, func() bool {
		usage, err = b.manager.Store.Prune()
		return err == nil && len(usage) == 1 && usage[0].Environments == 1
	}, 10*time.Second, 10*time.Millisecond, "once unused, it goes: %+v, %v", usage, err)
	require.Equal(t, "repo", usage[0].Repository)
}

func TestPrepare_InTheSandboxSetupWritesOnlyItsEnvironment(t *testing.T) {
	t.Parallel()
	b := setup(t, sandbox.ModeBwrap)
	b.configure("repo", environment.Config{Commands: []string{`echo ok > "$AZOLLA_CACHE_DATA/ok"`},
		Caches: []environment.Cache{{Name: "data"}}})
	env, err := b.manager.Prepare(context.Background(), "repo", source{"x": ""})
	require.NoError(t, err)
	defer env.Close()
	ok, err := os.ReadFile(filepath.Join(env.CacheDir("data"), "ok"))
	require.NoError(t, err)
	require.Equal(t, "ok\n", string(ok))
}

func TestCacheVar_IsAVariableName(t *testing.T) {
	t.Parallel()
	require.Equal(t, "AZOLLA_CACHE_NODE_MODULES", environment.CacheVar("node_modules"))
	require.Equal(t, "AZOLLA_CACHE_CUSTOM_TOOLS_DIR", environment.CacheVar("custom-tools_dir"))
}
