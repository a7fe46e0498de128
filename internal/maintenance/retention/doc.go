// Package retention prunes PATCH_DIAZOTROPH's workspaces and gc's its
// mirrors: a maintenance service each worker runs on its own git dir
// (patch.git_dir, every patch.gc_interval), and `azolla gc` on demand.
//
// # What goes, and when
//
// A workspace (<git_dir>/workspaces/<work_order_id>, with the gate's
// <work_order_id>.gate and unfinished clones of either) becomes prunable
// when its workorder is finished with:
//
//   - superseded: a newer workorder of the same objective exists (a retry).
//     Prunable from the newer workorder's created_at.
//   - done: its objective is DONE. Prunable from the later of the
//     objective's updated_at and the workorder's run record updated_at,
//     that is from the gate's verdict, when the pause state was written.
//
// It is removed once patch.retention (default 7 days) has passed since. The
// newest workorder of an objective that is not DONE (running, or waiting
// for a retry after a gate FAIL, or blocked) is never pruned.
//
// # The rule that matters
//
// A work branch that was not pushed is never pruned without the human
// having been told so, in a pause state, beforehand. So a runner's
// workspace goes only if one of these holds:
//
//   - pushed: the push marker PATCH_DIAZOTROPH wrote after a successful push
//     (patch.Pushed, beside the workspaces) names the commit the branch
//     points at in the workspace now;
//   - warned: the pause state written for that workorder carries a
//     KEEP_BRANCH action (pause.Warned), which says when it will be pruned;
//   - nothing to lose: the workspace has no work branch, or the branch has
//     no commit the snapshot's commit lacks (a run whose patch was refused
//     or did not apply; its attempted patch is in the output bundle).
//
// Otherwise it is kept, and reported as UNPUSHED_NOT_WARNED, however old.
// A gate workspace is rebuilt from the output bundle and a clone not yet
// renamed into place holds no branch of its own: they go with their
// workorder without that check.
//
// # Transcripts
//
// The run transcripts in the store (one per workorder, `azolla objective
// log`) go by the same rule of time: once their workorder is done or
// superseded and patch.retention has passed. They hold no unpushed work,
// so no push or warning is awaited. The store is shared, so every worker's
// pass looks at all of them; deleting one twice deletes it once.
//
// # What is never touched
//
// Only entries of the workspaces directory are removed, each a real
// directory directly in it: a symbolic link is reported and not followed,
// and nothing that resolves outside the directory is removed. An entry
// that no workorder in the store accounts for is reported as an orphan and
// left alone. An error about one entry or mirror is logged and counted and
// the pass goes on.
package retention
