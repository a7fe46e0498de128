package retention

import (
	"context"
	"errors"
	"fmt"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// transcriptPage is how many transcripts a pass reads at a time.
const transcriptPage = 500

// transcripts prunes the stored run transcripts by the workspaces' rule of
// time: a workorder's transcript goes once its workorder is finished with
// (Done or Superseded) and patch.retention has passed since. Unlike a
// workspace it holds no unpushed work, so no push or warning is awaited.
// The transcripts are in the store every worker shares: each worker's pass
// may delete the same row, which deletes it once.
func (p *Pruner) transcripts(ctx context.Context, rep *Report) {
	ps := &pass{p: p, now: p.now(), objectives: map[string]*objectiveFacts{}}
	var after domain.Cursor
	for ctx.Err() == nil {
		page, err := p.Store.ListTranscripts(ctx, store.PageParams{After: after, Limit: transcriptPage})
		if err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("transcripts: %v", err))
			p.log().Warn("transcript retention: not listed", "error", err)
			return
		}
		for _, t := range page {
			prunable, err := ps.transcriptPrunable(ctx, t.WorkOrderID)
			if err != nil {
				rep.Errors = append(rep.Errors, fmt.Sprintf("transcript of %s: %v", t.WorkOrderID, err))
				p.log().Warn("transcript retention: left as it is", "work_order_id", t.WorkOrderID, "error", err)
				continue
			}
			if !prunable {
				continue
			}
			if !p.DryRun {
				if _, err := p.Store.DeleteTranscript(ctx, t.WorkOrderID); err != nil {
					rep.Errors = append(rep.Errors, fmt.Sprintf("transcript of %s: %v", t.WorkOrderID, err))
					continue
				}
				p.log().Info("transcript pruned", "work_order_id", t.WorkOrderID, "bytes", t.Bytes)
			}
			rep.TranscriptsPruned = append(rep.TranscriptsPruned, t.WorkOrderID)
		}
		if len(page) < transcriptPage {
			return
		}
		last := page[len(page)-1]
		after = domain.Cursor{CreatedAt: last.CreatedAt, ID: last.WorkOrderID}
	}
}

// transcriptPrunable reports whether the transcript of workOrderID may go
// now. A transcript whose workorder is gone, or belongs to no objective (a
// track's), is left to its own kind of cleanup.
func (ps *pass) transcriptPrunable(ctx context.Context, workOrderID string) (bool, error) {
	w, err := ps.p.Store.GetWorkOrder(ctx, workOrderID)
	if errors.Is(err, domain.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("look up workorder %s: %w", workOrderID, err)
	}
	if w.ObjectiveID == "" {
		return false, nil
	}
	f, err := ps.objective(ctx, w.ObjectiveID)
	if err != nil {
		return false, err
	}
	reason, since, _, err := ps.lifecycle(ctx, f, w)
	if err != nil || reason == Active {
		return false, err
	}
	return !ps.now.Before(since.Add(ps.p.Retention)), nil
}
