package gitops

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"
)

// applyArgs are the options of git apply. No --recount: hunk counts must be
// right, which is how CheckPatch read the patch, and no whitespace fixing,
// so what is applied is exactly what was checked.
var applyArgs = []string{"--index", "-p1", "--whitespace=nowarn", "-"}

// Apply applies patch (from stdin) to the worktree and index of dir with one
// "git apply --index". A patch git refuses is an *ApplyError with git's
// output (errors.Is ErrApplyFailed) and leaves dir as it was: git apply
// checks every hunk of every file, and that the index matches the worktree,
// before it writes anything, so no separate "--check" run is needed. Run
// CheckPatch first; git apply repeats its own path checks. The files the
// patch touches must match the index (a fresh workspace does).
func (g Git) Apply(ctx context.Context, dir, patch string) error {
	_, err := g.run(ctx, call{dir: dir, stdin: strings.NewReader(patch)}, append([]string{"apply"}, applyArgs...)...)
	if err == nil {
		return nil
	}
	ge, ok := errors.AsType[*Error](err)
	if !ok || ge.ExitCode <= 0 {
		return fmt.Errorf("apply patch: %w", err)
	}
	// git apply exits 128 both for a patch it cannot read and outside a
	// repository (where --index refuses to start): only a failure costs
	// the run that tells them apart.
	if _, err := g.run(ctx, call{dir: dir}, "rev-parse", "--git-dir"); err != nil {
		return fmt.Errorf("apply patch: %s is not a git worktree: %w", dir, err)
	}
	return &ApplyError{Output: ge.Stderr}
}

// Author is who a commit is by; it is both its author and its committer.
type Author struct {
	Name, Email string
}

func (a Author) validate() error {
	for _, v := range []string{a.Name, a.Email} {
		if strings.TrimSpace(v) == "" || strings.ContainsAny(v, "<>\n\x00") {
			return fmt.Errorf("commit: invalid author %q <%s>: name and email must be non-empty, without '<', '>' or newlines", a.Name, a.Email)
		}
	}
	return nil
}

// Commit stages everything in dir ("add -A": changes, deletions and
// untracked files that are not ignored) and commits it with a as author and
// committer and message as the message, without hooks or signing. It
// returns the new HEAD, or an error wrapping ErrNothingToCommit when the
// staged tree equals HEAD's. On an unborn branch it makes the first commit.
func (g Git) Commit(ctx context.Context, dir string, a Author, message string) (sha string, err error) {
	if err := validateCommitInput(a, message); err != nil {
		return "", err
	}
	if _, err := g.run(ctx, call{dir: dir}, "add", "-A"); err != nil {
		return "", fmt.Errorf("commit: stage changes: %w", err)
	}
	return g.commitIndex(ctx, dir, a, message)
}

// CommitStaged is Commit without the "add -A": it commits dir's index as it
// is, such as Apply left it, and leaves whatever else is in the worktree out
// of the commit (and in the worktree).
func (g Git) CommitStaged(ctx context.Context, dir string, a Author, message string) (sha string, err error) {
	if err := validateCommitInput(a, message); err != nil {
		return "", err
	}
	return g.commitIndex(ctx, dir, a, message)
}

// env makes a the author and committer of a git command's commit.
func (a Author) env() []string {
	return []string{"GIT_AUTHOR_NAME=" + a.Name, "GIT_AUTHOR_EMAIL=" + a.Email,
		"GIT_COMMITTER_NAME=" + a.Name, "GIT_COMMITTER_EMAIL=" + a.Email}
}

func validateCommitInput(a Author, message string) error {
	if err := a.validate(); err != nil {
		return err
	}
	if strings.TrimSpace(message) == "" {
		return errors.New("commit: empty message")
	}
	return nil
}

// commitIndex commits dir's index and returns the new HEAD.
func (g Git) commitIndex(ctx context.Context, dir string, a Author, message string) (string, error) {
	c := call{dir: dir, stdin: strings.NewReader(message), env: a.env()}
	// --cleanup=whitespace: a user's commit.cleanup=strip would eat lines
	// of the message that start with '#'. maintenance.auto=false: git
	// commit would start "git maintenance run --auto" after every commit,
	// a process that finds nothing to do in a workspace (thrown away, not
	// maintained); mirrors are maintained by Mirrors.Gc.
	_, err := g.run(ctx, c, "-c", "maintenance.auto=false",
		"commit", "--quiet", "--no-verify", "--no-gpg-sign", "--cleanup=whitespace", "--file=-")
	if exitCode(err) == 1 {
		// git commit refuses a staged tree equal to HEAD's (or an empty
		// index on an unborn branch) with 1, which it also uses for other
		// refusals: only then ask which it was, against HEAD or the empty
		// tree on an unborn branch.
		_, derr := g.run(ctx, call{dir: dir}, "diff", "--cached", "--quiet", "--no-ext-diff", "--ignore-submodules=none")
		if derr == nil {
			return "", fmt.Errorf("commit in %s: %w", dir, ErrNothingToCommit)
		}
	}
	if err != nil {
		return "", fmt.Errorf("commit: %w", err)
	}
	return g.HeadOf(ctx, dir)
}

// Push force-pushes refs/heads/<branch> of dir to the same ref of remote (a
// URL or absolute path; see ValidateRepository). The push is forced because
// a rerun resets the branch to its base and commits anew.
func (g Git) Push(ctx context.Context, dir, remote, branch string) error {
	return g.PushWith(ctx, dir, remote, branch, nil)
}

// HTTPAuth is a credential that azolla's own push sends to an HTTPS
// remote (a forge's token). git gets it through its configuration
// environment as a header, so it is in no URL, argument, file or error.
type HTTPAuth struct {
	User, Token string
}

// env is the git configuration, as environment entries, that sends a as
// a Basic authorization header with every HTTP request.
func (a *HTTPAuth) env() []string {
	if a == nil {
		return nil
	}
	basic := base64.StdEncoding.EncodeToString([]byte(a.User + ":" + a.Token))
	return []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.extraHeader",
		"GIT_CONFIG_VALUE_0=Authorization: Basic " + basic}
}

// PushWith is Push with auth sent to an HTTPS remote; nil auth is Push.
func (g Git) PushWith(ctx context.Context, dir, remote, branch string, auth *HTTPAuth) error {
	return g.push(ctx, dir, remote, branch, auth, true)
}

// PushAdding is PushWith without force: it only adds commits to the
// remote's branch, and git refuses it when that branch holds a commit dir's
// lacks (someone pushed to it since), replacing nothing.
func (g Git) PushAdding(ctx context.Context, dir, remote, branch string, auth *HTTPAuth) error {
	return g.push(ctx, dir, remote, branch, auth, false)
}

func (g Git) push(ctx context.Context, dir, remote, branch string, auth *HTTPAuth, force bool) error {
	if auth != nil && !strings.HasPrefix(remote, "https://") && !strings.HasPrefix(remote, "http://") {
		return fmt.Errorf("push %s: a credential is only sent to an http(s) remote", branch)
	}
	if err := ValidateRepository(remote); err != nil {
		return err
	}
	if err := ValidateBranch(branch); err != nil {
		return err
	}
	ref := "refs/heads/" + branch
	// Less than a byte a second for the stall timeout: the connection is
	// given up (curl's low-speed limit), and the push may be tried again.
	stall := max(1, int(g.stallTimeout().Round(time.Second)/time.Second))
	args := []string{"-c", "http.lowSpeedLimit=1", "-c", fmt.Sprintf("http.lowSpeedTime=%d", stall),
		"push", "--quiet", "--no-verify", "--no-signed", "--no-follow-tags", "--recurse-submodules=no"}
	if force {
		args = append(args, "--force")
	}
	if _, err := g.run(ctx, call{dir: dir, env: auth.env()}, append(args, "--", remote, ref+":"+ref)...); err != nil {
		return fmt.Errorf("push %s to %s: %w", branch, redactArgs([]string{remote})[0], err)
	}
	return nil
}
