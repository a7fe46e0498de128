package gitops

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Sentinels callers branch on with errors.Is.
var (
	// ErrInvalidRepository: a repository URL or path that is refused.
	ErrInvalidRepository = errors.New("invalid repository")
	// ErrInvalidBranch: a branch name that is refused.
	ErrInvalidBranch = errors.New("invalid branch name")
	// ErrInvalidCommit: not a full lowercase hex commit id.
	ErrInvalidCommit = errors.New("invalid commit id")
	// ErrBranchNotFound: the repository has no such branch.
	ErrBranchNotFound = errors.New("branch not found")
	// ErrCommitNotFound: the repository does not have the commit.
	ErrCommitNotFound = errors.New("commit not found")
	// ErrNotWorkspace: a directory exists where a workspace should be but is
	// not a clone of the mirror; it is left alone.
	ErrNotWorkspace = errors.New("not a workspace of this mirror")
	// ErrPatchRefused: CheckPatch refused the patch; see *RefusedError.
	ErrPatchRefused = errors.New("patch refused")
	// ErrApplyFailed: git could not apply the patch; see *ApplyError.
	ErrApplyFailed = errors.New("patch does not apply")
	// ErrNothingToCommit: the worktree has no change against HEAD.
	ErrNothingToCommit = errors.New("nothing to commit")
)

// stderrTail is how much of git's stderr an *Error keeps.
const stderrTail = 4 << 10

// Error is a failed git invocation.
type Error struct {
	// Args are git's arguments after the hardening options, with any
	// password in a URL masked.
	Args []string
	// ExitCode is git's exit status, or -1 when it did not exit by itself
	// (it could not start, or it was killed).
	ExitCode int
	// Stderr is the last few KiB of git's standard error, trimmed.
	Stderr string
	// Err is the cause: ctx.Err() when the context ended, otherwise the
	// error from running the process.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "git %s: %v", subcommand(e.Args), e.Err)
	if e.Stderr != "" {
		b.WriteString(": ")
		b.WriteString(e.Stderr)
	}
	return b.String()
}

// Unwrap returns the cause, so errors.Is(err, context.Canceled) works.
func (e *Error) Unwrap() error { return e.Err }

// exitCode returns err's git exit status, or -1 if err is not an *Error that
// git exited with.
func exitCode(err error) int {
	var ge *Error
	if errors.As(err, &ge) {
		return ge.ExitCode
	}
	return -1
}

// Transient says whether err, from a push or a fetch, failed on the way
// to the remote: the connection was refused, reset or left silent (for
// Git.StallTimeout), the server answered nothing or a 5xx, or another
// push held the branch's lock. Trying again may then succeed. A
// refusal (a rejected ref, a failed authentication, a missing repository,
// any other 4xx) is not transient, nor is a run cut short by its context.
func Transient(err error) bool {
	var ge *Error
	// 128 when git gives up on the remote, 1 when the upload of a push
	// fails midway (as when the remote rejects a ref, told apart below).
	if !errors.As(err, &ge) || (ge.ExitCode != 128 && ge.ExitCode != 1) {
		return false
	}
	msg := strings.ToLower(ge.Stderr)
	for _, refused := range []string{"returned error: 4", "authentication failed", "permission denied",
		"not found", "does not appear to be a git repository", "[rejected]"} {
		if strings.Contains(msg, refused) {
			return false
		}
	}
	for _, transport := range []string{"unable to access", "the remote end hung up", "rpc failed", "early eof",
		"connection reset", "connection refused", "timed out", "empty reply", "returned error: 5",
		"could not read from remote repository", "cannot lock ref", "operation too slow"} {
		if strings.Contains(msg, transport) {
			return true
		}
	}
	return false
}

// subcommand is the first argument that is neither a "-c" pair nor an option.
func subcommand(args []string) string {
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "-c":
			i++
		case strings.HasPrefix(args[i], "-"):
		default:
			return args[i]
		}
	}
	return "(no subcommand)"
}

// redactArgs masks the password of any URL argument, for error messages.
func redactArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		if !strings.Contains(a, "://") || !strings.Contains(a, "@") {
			continue
		}
		if u, err := url.Parse(a); err == nil && u.User != nil {
			out[i] = u.Redacted()
		}
	}
	return out
}

// RefusedError says why CheckPatch refused a patch. Path is the offending
// path as the patch names it after prefix stripping, or "" for a refusal of
// the whole patch.
type RefusedError struct {
	Path   string
	Reason string
}

func (e *RefusedError) Error() string {
	if e.Path == "" {
		return "patch refused: " + e.Reason
	}
	return fmt.Sprintf("patch refused: %q: %s", e.Path, e.Reason)
}

// Unwrap makes errors.Is(err, ErrPatchRefused) true.
func (e *RefusedError) Unwrap() error { return ErrPatchRefused }

func refuse(path, format string, args ...any) error {
	return &RefusedError{Path: path, Reason: fmt.Sprintf(format, args...)}
}

// ApplyError is a patch git would not apply; Output is git's stderr.
type ApplyError struct {
	Output string
}

func (e *ApplyError) Error() string {
	return "patch does not apply: " + e.Output
}

// Unwrap makes errors.Is(err, ErrApplyFailed) true.
func (e *ApplyError) Unwrap() error { return ErrApplyFailed }
