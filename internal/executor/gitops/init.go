package gitops

import (
	"context"
	"fmt"
)

// Init makes dir (which must exist) a new repository whose unborn HEAD is
// branch; Commit then makes its first commit.
func (g Git) Init(ctx context.Context, dir, branch string) error {
	if err := ValidateBranch(branch); err != nil {
		return err
	}
	if _, err := g.run(ctx, call{dir: dir}, "init", "--quiet", "--initial-branch="+branch, "--", "."); err != nil {
		return fmt.Errorf("init repository %s: %w", dir, err)
	}
	return nil
}
