// Package gitops is the git plumbing behind PATCH_DIAZOTROPH: it keeps bare
// mirrors of upstream repositories, prepares a workspace on branch
// azolla/<objective_id>, checks and applies a patch, commits it and pushes
// the branch, and gc's the mirrors (under the lock their fetches take). It drives the real git binary (2.28 or newer) and nothing else.
//
// # What every invocation guarantees
//
//   - No user-controlled string reaches git where it could be read as an
//     option. Repository URLs and paths come after "--"; revisions come after
//     "--end-of-options" or are validated first (ValidateBranch, a 40 or 64
//     character lowercase hex commit id); a value given to an option such as
//     "-B <branch>" is always validated.
//   - No hook, signing program, external diff, textconv or ext:: transport
//     runs: "-c" options set before the subcommand pin core.hooksPath to
//     /dev/null, commit.gpgSign, tag.gpgSign, protocol.ext.allow=never,
//     submodule recursion off and core.fsmonitor off, whatever the user's or
//     the repository's config says.
//   - Nothing waits for a human: GIT_TERMINAL_PROMPT=0, GIT_ASKPASS and
//     SSH_ASKPASS_REQUIRE make credential prompts fail, and git runs in its
//     own session with no controlling terminal, so ssh cannot ask either.
//   - Git works on the repository it is pointed at and no other: inherited
//     variables that select a repository or an index (GIT_DIR, GIT_WORK_TREE,
//     GIT_INDEX_FILE, ...) are dropped, and GIT_CEILING_DIRECTORIES stops
//     discovery at the directory given, so a directory that is not itself a
//     repository is an error rather than its parent's repository.
//   - Messages are in English (LC_ALL=C) and replace objects are ignored.
//   - Cancelling the context kills git and everything it started; a failed
//     run is an *Error carrying the subcommand, exit code and stderr tail.
//
// # Patches
//
// CheckPatch reads a patch the way "git apply -p1" does (exact hunk counts,
// no --recount) and refuses it before anything touches the disk if any path
// it reads or writes is absolute, climbs out with "..", names a .git
// component, goes through a symbolic link already in the worktree, or if it
// creates a symlink or carries binary data the policy does not allow. Apply
// then runs "git apply --index", which repeats the path checks of its own
// and checks the whole patch before it writes anything.
package gitops
