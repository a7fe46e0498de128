// Package workflows holds azolla's workflow definitions: deterministic code
// that decides what runs next and leaves every I/O to the activities.
// ObjectiveWorkflow is one objective's lifecycle; TrackWorkflow serializes a
// task-management track's triage and manifest runs; DeadlineMonitorWorkflow
// is what the deadline Schedule runs.
//
// # Versioning
//
// Lifecycles live for days, across deployments, so a worker replays
// histories written by older code. The rules:
//
//   - A recorded history is kept forever. testdata/ holds one folder per
//     generation (g001, g002, ...); `make record-histories` adds the next
//     generation from real runs on the embedded server and never deletes
//     one, and TestReplay_RecordedHistories replays every generation. From
//     g005 on a generation also holds a track's history and a monitor run:
//     the rules below bind TrackWorkflow and DeadlineMonitorWorkflow too.
//   - A change that alters the commands a workflow emits (activities
//     scheduled, timers, signals, search attribute upserts, child
//     workflows, completion) goes behind workflow.GetVersion with its own
//     change id, declared in versions.go with what it changed. A change that
//     carries an earlier one further may instead be that id's next version
//     (its maxSupported raised by one): every id costs each run a marker
//     and a search attribute upsert at its start. The old path stays,
//     reached by the versions before it, until no history that needs it can
//     still be running (its runs have completed and their retention has
//     passed); only then may it go, with its change id kept.
//   - Changes that emit the same commands (logging, queries, an activity's
//     input gaining a field old workers ignore) need no version, but still
//     replay every generation.
//   - Handlers finish before the workflow completes or continues as new:
//     workflow.AllHandlersFinished is awaited on every way out, so no
//     update is left without an answer.
//
// After a change, run `make record-histories` and commit the new
// generation beside the old ones.
package workflows
