// Package environment prepares a repository's environment before an agent
// or a gate command runs in it: the dependencies a build needs, downloaded
// once by a setup phase and kept, so that the runs after it need no network
// and no time to fetch them (docs/repositories.md).
//
// # What an environment is
//
// A preset (go, node, python, rust) or the repository's own configuration
// says which setup commands fill which cache directories (Go's module and
// build caches, node_modules, a virtual environment), what variables point
// the tools at them, and which files the result depends on (go.sum, a
// lockfile). Preset auto detects the ecosystem from the files at the root
// of the base commit. Everything is read from the base commit, never from
// the branch an agent writes: a patch that edits go.mod or .azolla/setup.sh
// does not change how that patch is set up.
//
// # Cached by content
//
// An environment is keyed by a hash of its preset, commands, variables,
// caches and the key files' contents. Its directory on this host,
//
//	<root>/<repository id>/<key>/meta.json    written last: the environment is ready
//	<root>/<repository id>/<key>/caches/<name>
//	<root>/<repository id>/<key>.lock          flock: one builder, users share it
//	<root>/<repository id>/layers/<run>/       a run's own copies of the caches it writes
//
// is built once: the first run that needs a missing key takes the key's
// lock exclusively and builds it; any other run that needs it meanwhile
// waits for the lock and then finds it ready. A run using an environment
// holds the lock shared, so the size cap's eviction (least recently used,
// per repository) passes over it. Each host keeps its own environments: a
// remote worker builds what it needs.
//
// # Runs see the caches, not the network
//
// The agent and the gate see the caches at their paths: read-only where
// the tools only read (the module cache, node_modules, the virtual
// environment), and as a copy of their own where they write (Go's build
// cache, Cargo's home), so that one run cannot poison the next. The copy is
// a reflink where the file system has them, a real copy elsewhere.
//
// # Failures are the environment's
//
// A setup command that fails is a *SetupError: the run does not start the
// agent, and the objective is BLOCKED with the command, its output's tail
// and what to change, not charged a failed round.
package environment
