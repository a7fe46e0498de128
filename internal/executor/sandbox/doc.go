// Package sandbox is azolla's executor boundary: everything a process run
// on behalf of work sees of the machine it runs on. Such a process (a
// COMMAND_DIAZOTROPH command, a coding agent run by the command generator,
// a repository's gate command) runs code azolla does not trust: model
// output, ticket text anyone may have written, tests an agent just changed.
//
// Environment. A run's environment is built from an allowlist, never
// copied from the worker's:
//
//	base       PATH, LANG, LANGUAGE, LC_*, TZ from the worker; TERM=dumb;
//	           HOME and TMPDIR set to directories private to the run
//	pass_env   the named variables, copied from the worker's environment
//	env        the configured NAME: value pairs
//	AZOLLA_*   the run's descriptors (objective, workorder, branch, ...),
//	           set by azolla last, so nothing configured can spoof them
//
// CheckName refuses, in configuration, a name that could carry azolla's own
// settings (AZOLLA_*, the PostgreSQL client's credentials) or that azolla
// sets itself (HOME, TMPDIR).
//
// Confinement. With bubblewrap (ModeBwrap, or ModeAuto where it works) a
// run sees:
//
//	/                      read-only
//	its working directory  writable (the workspace, or the command's dir)
//	its HOME and TMPDIR    writable, private to the run
//	configured binds       read-only or writable, as configured
//	/tmp /var/tmp /run     empty
//	hidden paths           empty (the data dir, the store file, the git
//	                       mirrors and other workspaces, the configuration
//	                       file, key and token files, the worker's HOME)
//	/proc                  its own processes only (a PID namespace)
//	network                the host's, or none (a network namespace with
//	                       loopback only), per executor
//
// and has no capabilities, no controlling terminal, and dies with the
// worker. Killing a run kills every process in it, however it daemonized.
//
// Limits. Every run, sandboxed or not, gets resource limits applied while
// its first process waits at a gate, before it runs anything (proc.Spec's
// Setup): RLIMIT_FSIZE, RLIMIT_AS and no core files, and, where the worker
// can write a cgroup with the pids or memory controller, a cgroup of its
// own per run whose pids.max and memory limit hold even for root. Without
// a pids cgroup the processes are bounded by RLIMIT_NPROC instead, which
// does not bind root and counts all of the worker user's processes. A
// limit a run hit is named in its Outcome.
//
// Progress. A command given a StallTimeout (the COMMAND_DIAZOTROPH command
// and the command generator's agent get executor.stall_timeout) that for
// that long writes no output and changes no file where it works is killed
// like one out of budget, and Exec's error is ErrStalled; stall.go says how
// progress is watched and what that costs.
package sandbox
