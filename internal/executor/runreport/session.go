package runreport

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Continuing an agent's session (docs/patches.md#agent-sessions): the next
// round of an objective asks the agent to continue the session its round
// before reported, with the round's input as the next message, instead of
// starting cold.

// sessionID is what an agent's session id may look like to be put on a
// command line: the ids come from the agent's own output, so anything else
// is refused rather than quoted.
// Compiled on first use: a process that never continues a session does
// not pay for it at start.
var sessionID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$`) })

// ErrNoSession says the session to continue is not in the agent's home:
// the round starts a new one.
var ErrNoSession = errors.New("the session is not in the agent's home")

// maxSessionFile bounds a session file that is carried to a new working
// directory.
const maxSessionFile = 256 << 20

// claudeContinue continues Claude Code session id in worktree, HOME home.
// Claude Code keeps a session under ~/.claude/projects/<encoded working
// directory>/<id>.jsonl and looks for it only under the current working
// directory's, which every round's new workspace changes: the session's
// file is copied there from the directory of the round that wrote it.
// The directory's name is the working directory with every '/' made '-';
// later versions also make every other character but letters and digits
// '-', so both names are written when they differ.
func claudeContinue(home, worktree, id string) (string, error) {
	projects := filepath.Join(home, ".claude", "projects")
	matches, err := filepath.Glob(filepath.Join(projects, "*", id+".jsonl"))
	if err != nil {
		return "", err
	}
	if len(matches) == 0 {
		return "", fmt.Errorf("%w: no %s under %s", ErrNoSession, id+".jsonl", projects)
	}
	wt, err := filepath.EvalSymlinks(worktree)
	if err != nil {
		return "", err
	}
	from := newest(matches)
	for _, dir := range claudeProjectDirs(wt) {
		to := filepath.Join(projects, dir, id+".jsonl")
		if to == from {
			continue
		}
		if err := copyFile(from, to); err != nil {
			return "", fmt.Errorf("carry session %s to %s: %w", id, worktree, err)
		}
	}
	return " --resume " + id, nil
}

// newest is the most recently written of paths: the session as the last
// round left it.
func newest(paths []string) string {
	best, at := paths[0], time.Time{}
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.ModTime().After(at) {
			best, at = p, fi.ModTime()
		}
	}
	return best
}

var notAlnum = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9]`) })

// claudeProjectDirs are the names Claude Code may give the project
// directory of working directory wt.
func claudeProjectDirs(wt string) []string {
	slashes := strings.ReplaceAll(wt, "/", "-")
	all := notAlnum().ReplaceAllString(wt, "-")
	if all == slashes {
		return []string{slashes}
	}
	return []string{slashes, all}
}

// copyFile copies from to to (its directory made private to this user),
// refusing a source that is not a regular file or is too large.
func copyFile(from, to string) error {
	fi, err := os.Lstat(from)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxSessionFile {
		return fmt.Errorf("%s is not a regular file of at most %d bytes", from, maxSessionFile)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		return err
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, io.LimitReader(in, maxSessionFile)); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Continue is what to add to p's command line to continue session id of
// the agent whose HOME is home in worktree; an error says why it cannot
// (ErrNoSession: the session is not there), and the round starts a new
// session.
func (p Preset) Continue(home, worktree, id string) (string, error) {
	if p.continueSession == nil {
		return "", fmt.Errorf("the %s preset does not continue sessions", p.Name)
	}
	if !sessionID().MatchString(id) {
		return "", fmt.Errorf("session id %q is not one to put on a command line", id)
	}
	return p.continueSession(home, worktree, id)
}

// ContinuesSessions says whether p can continue an agent's session.
func (p Preset) ContinuesSessions() bool { return p.continueSession != nil }
