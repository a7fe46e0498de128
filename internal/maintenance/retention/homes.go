package retention

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph/patch"
)

// homes removes the agent's home of each objective that is DONE since
// Retention, as its workspaces are (docs/patches.md#agent-sessions): its
// sessions are of no use once the objective is finished with. A home
// whose objective the store does not know is left alone, as an orphan
// workspace is.
func (p *Pruner) homes(ctx context.Context, rep *Report) {
	root := patch.HomesDir(p.Dir)
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		rep.Errors = append(rep.Errors, "homes: "+err.Error())
		return
	}
	now := p.now()
	for _, de := range entries {
		if ctx.Err() != nil {
			return
		}
		if !de.IsDir() || de.Type()&fs.ModeSymlink != 0 {
			continue
		}
		o, err := p.Store.GetObjective(ctx, de.Name())
		var nf *domain.NotFoundError
		switch {
		case errors.As(err, &nf):
			continue
		case err != nil:
			rep.Errors = append(rep.Errors, fmt.Sprintf("homes/%s: %v", de.Name(), err))
			continue
		case o.Status != domain.StatusDone || now.Sub(o.UpdatedAt) < p.Retention:
			continue
		}
		if !p.DryRun {
			if err := os.RemoveAll(filepath.Join(root, de.Name())); err != nil {
				rep.Errors = append(rep.Errors, fmt.Sprintf("homes/%s: %v", de.Name(), err))
				continue
			}
			p.log().Info("agent home pruned", "objective_id", o.ObjectiveID)
		}
		rep.HomesPruned = append(rep.HomesPruned, o.ObjectiveID)
	}
}
