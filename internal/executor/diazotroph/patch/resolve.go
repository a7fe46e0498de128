package patch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/gitops"
)

// Resolve reads repository's baseBranch head ("" means the default branch)
// through its mirror and lists the first files there (docs/protocol/patch-flow.md#the-snapshot).
// Targets a human must fix wrap diazotroph.ErrBadTarget: an invalid
// repository or branch name, a local repository that is not there, a remote
// that refuses us, a branch the repository lacks. Anything else (a network
// failure) is returned as it is, to be retried.
func (p *Patch) Resolve(ctx context.Context, repository, baseBranch string) (diazotroph.Target, error) {
	bad := func(err error) (diazotroph.Target, error) {
		return diazotroph.Target{}, fmt.Errorf("%w: %w", diazotroph.ErrBadTarget, err)
	}
	if err := gitops.ValidateRepository(repository); err != nil {
		return bad(err)
	}
	if baseBranch != "" {
		if err := gitops.ValidateBranch(baseBranch); err != nil {
			return bad(err)
		}
	}
	if local := localPath(repository); local != "" {
		if _, err := os.Stat(local); err != nil {
			return bad(fmt.Errorf("repository %s: %w", repository, err))
		}
	}
	mirror, err := p.mirrors.Sync(ctx, repository)
	if err != nil {
		if ctx.Err() == nil && (localPath(repository) != "" || refused(err)) {
			return bad(fmt.Errorf("repository %s cannot be read: %w", repository, err))
		}
		return diazotroph.Target{}, fmt.Errorf("fetch %s: %w", repository, err)
	}
	g := p.o.Git
	if baseBranch == "" {
		if baseBranch, err = g.DefaultBranch(ctx, mirror); err != nil {
			return bad(fmt.Errorf("repository %s has no default branch; name a base branch: %w", repository, err))
		}
	}
	sha, err := g.ResolveBranch(ctx, mirror, baseBranch)
	if errors.Is(err, gitops.ErrBranchNotFound) {
		return bad(fmt.Errorf("repository %s has no branch %q", repository, baseBranch))
	}
	if err != nil {
		return diazotroph.Target{}, err
	}
	files, total, err := g.ListFiles(ctx, mirror, sha, p.o.FileListLimit)
	if err != nil {
		return diazotroph.Target{}, err
	}
	return diazotroph.Target{Repository: repository, BaseBranch: baseBranch, CommitSHA: sha, Files: files,
		TotalFiles: total}, nil
}

// localPath is the directory of a local repository, "" for a remote one.
func localPath(repository string) string {
	if filepath.IsAbs(repository) {
		return repository
	}
	if rest, ok := strings.CutPrefix(repository, "file://"); ok {
		return rest
	}
	return ""
}

// refusedBy are what git says when a remote answers but will not serve the
// repository: retrying changes nothing until a human acts.
var refusedBy = []string{"not found", "does not appear to be a git repository", "authentication failed",
	"could not read username", "permission denied", "access denied", "repository not exported"}

func refused(err error) bool {
	msg := strings.ToLower(err.Error())
	for _, s := range refusedBy {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
