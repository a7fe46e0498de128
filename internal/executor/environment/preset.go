package environment

import (
	"fmt"
	"slices"
	"strings"
)

// Preset names.
const (
	PresetAuto   = "auto"
	PresetNone   = "none"
	PresetGo     = "go"
	PresetNode   = "node"
	PresetPython = "python"
	PresetRust   = "rust"
	// PresetCustom is the name of an environment made of configured
	// commands alone.
	PresetCustom = "custom"
)

// Cache is one directory an environment keeps.
type Cache struct {
	// Name is its directory under the environment, and what {cache:NAME}
	// in a variable stands for.
	Name string
	// Env is the variable that points setup and runs at it; "" for none.
	Env string
	// Writable: runs write to it, so each gets a copy of its own; else
	// runs see it read-only.
	Writable bool
	// SetupOnly: only setup sees it (a download cache).
	SetupOnly bool
}

// Preset is what an ecosystem's environment is made of.
type Preset struct {
	Name string
	// Markers are files at the repository's root that select the preset
	// under auto; Lockfiles among them are key files too.
	Markers []string
	// KeyFiles are the root's files the environment depends on: a glob
	// (requirements*.txt) matches root files only.
	KeyFiles []string
	// Commands fill the caches; Warm commands then run too, and only say
	// so when they fail (they compile what the base commit has, which may
	// rightly be broken).
	Commands []string
	Warm     []string
	Caches   []Cache
	// Env is set in setup and in runs; values may hold {cache:NAME} and
	// {worktree}. RunEnv is set in runs only (the network is theirs no
	// longer), SetupEnv in setup only.
	Env, RunEnv, SetupEnv map[string]string
	// PassEnv are the worker's variables setup reads when they are set:
	// a module proxy, a package index.
	PassEnv []string
	// PathPrefix are directories put before PATH in setup and runs.
	PathPrefix []string
	// Links are made in each run's worktree, pointing at a cache path
	// (node_modules), unless the worktree has that path already; they are
	// kept out of git's sight.
	Links map[string]string
	// Keep are paths setup makes in its source checkout that move into the
	// environment once it succeeds (node_modules: npm writes it there).
	Keep map[string]string
}

// Node package managers, by the lockfile that says which one a repository
// uses.
var nodeInstall = []struct{ lockfile, command string }{
	{"pnpm-lock.yaml", "pnpm install --frozen-lockfile --ignore-scripts && pnpm rebuild"},
	{"yarn.lock", "yarn install --frozen-lockfile --ignore-scripts && npm rebuild"},
	{"package-lock.json", "npm ci --ignore-scripts --no-audit --no-fund && npm rebuild"},
}

// pythonSetup makes the virtual environment and installs the
// requirements files at the root, or else the dependencies pyproject.toml
// lists (with its test and dev extras), never the project itself: the
// worktree's code is what runs.
const pythonSetup = `set -e
python3 -m venv "$AZOLLA_CACHE_VENV"
found=
for f in requirements*.txt; do
  [ -f "$f" ] || continue
  found=1
  "$AZOLLA_CACHE_VENV/bin/pip" install --disable-pip-version-check -r "$f"
done
if [ -z "$found" ] && [ -f pyproject.toml ]; then
  "$AZOLLA_CACHE_VENV/bin/python" - > "$TMPDIR/requirements.txt" <<'PY'
import tomllib
p = tomllib.load(open("pyproject.toml", "rb")).get("project", {})
deps = list(p.get("dependencies", []))
for extra in ("test", "tests", "dev"):
    deps += p.get("optional-dependencies", {}).get(extra, [])
print("\n".join(deps))
PY
  if [ -s "$TMPDIR/requirements.txt" ]; then
    "$AZOLLA_CACHE_VENV/bin/pip" install --disable-pip-version-check -r "$TMPDIR/requirements.txt"
  fi
fi`

// presets are the built-in presets, in the order auto tries them.
var presets = []Preset{
	{
		Name:     PresetGo,
		Markers:  []string{"go.mod"},
		KeyFiles: []string{"go.mod", "go.sum", "go.work", "go.work.sum"},
		Commands: []string{"go mod download"},
		// Compiling the base commit's packages and tests fills the build
		// cache the gate then finds warm.
		Warm: []string{"go build ./... && go test -count=1 -run '^$' ./... > /dev/null"},
		Caches: []Cache{
			{Name: "gomodcache", Env: "GOMODCACHE"},
			{Name: "gocache", Env: "GOCACHE", Writable: true},
		},
		Env: map[string]string{"GOTOOLCHAIN": "local"},
		// No GOPROXY=off: a patch that adds a module fails on the run's
		// network (none, or an allowlist that names the refused proxy),
		// which says more.
		RunEnv:  map[string]string{"GOFLAGS": "-mod=readonly"},
		PassEnv: []string{"GOPROXY", "GOPRIVATE", "GONOPROXY", "GONOSUMDB", "GOSUMDB", "GOINSECURE"},
	},
	{
		Name:     PresetNode,
		Markers:  []string{"pnpm-lock.yaml", "yarn.lock", "package-lock.json"},
		KeyFiles: []string{"package.json", "pnpm-lock.yaml", "yarn.lock", "package-lock.json", ".npmrc"},
		Caches: []Cache{
			{Name: "node_modules"},
			{Name: "npm", Env: "npm_config_cache", SetupOnly: true},
		},
		Env:        map[string]string{"npm_config_update_notifier": "false"},
		RunEnv:     map[string]string{"npm_config_offline": "true"},
		PassEnv:    []string{"npm_config_registry", "NPM_CONFIG_REGISTRY", "NODE_EXTRA_CA_CERTS"},
		PathPrefix: []string{"{cache:node_modules}/.bin"},
		Links:      map[string]string{"node_modules": "{cache:node_modules}"},
		Keep:       map[string]string{"node_modules": "node_modules"},
	},
	{
		Name:     PresetPython,
		Markers:  []string{"requirements.txt", "pyproject.toml"},
		KeyFiles: []string{"requirements*.txt", "pyproject.toml", "setup.cfg", "setup.py"},
		Commands: []string{pythonSetup},
		Caches: []Cache{
			{Name: "venv", Env: "VIRTUAL_ENV"},
			{Name: "pip", Env: "PIP_CACHE_DIR", SetupOnly: true},
		},
		Env:        map[string]string{"PYTHONDONTWRITEBYTECODE": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
		RunEnv:     map[string]string{"PIP_NO_INDEX": "1"},
		PassEnv:    []string{"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_NO_INDEX", "PIP_CERT"},
		PathPrefix: []string{"{cache:venv}/bin"},
	},
	{
		Name:     PresetRust,
		Markers:  []string{"Cargo.lock"},
		KeyFiles: []string{"Cargo.toml", "Cargo.lock", "rust-toolchain.toml", "rust-toolchain"},
		Commands: []string{"cargo fetch --locked"},
		Caches:   []Cache{{Name: "cargo", Env: "CARGO_HOME", Writable: true}},
		RunEnv:   map[string]string{"CARGO_NET_OFFLINE": "true"},
	},
}

// nodePreset is the node preset installing with the package manager of
// the lockfile among files, the root's.
func nodePreset(p Preset, files []string) Preset {
	for _, n := range nodeInstall {
		if slices.Contains(files, n.lockfile) {
			p.Commands = []string{n.command}
			return p
		}
	}
	p.Commands = []string{nodeInstall[len(nodeInstall)-1].command}
	return p
}

// Lookup returns the built-in preset named name.
func Lookup(name string) (Preset, error) {
	for _, p := range presets {
		if p.Name == name {
			return p, nil
		}
	}
	return Preset{}, fmt.Errorf("unknown preset %q: one of %s", name, strings.Join(Names(), ", "))
}

// Names are the values setup.preset takes.
func Names() []string {
	out := []string{PresetAuto, PresetNone}
	for _, p := range presets {
		out = append(out, p.Name)
	}
	return out
}

// detect is the preset auto picks for a repository whose root holds
// files; "" when none fits.
func detect(files []string) string {
	for _, p := range presets {
		for _, m := range p.Markers {
			if slices.Contains(files, m) {
				return p.Name
			}
		}
	}
	return ""
}
