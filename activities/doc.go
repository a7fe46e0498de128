// Package activities holds every I/O step of the objective lifecycle
// (docs/protocol/lifecycle.md) as Temporal activities, on small structs by
// concern, each holding only the dependencies it uses:
//
//   - Steps: an objective's own steps, readiness (Load, Ready, Reject),
//     the scheduler (Schedule), the runner (Run) and the gate (Gate);
//   - Tracks: the task-management tracks' scheduler and gate
//     (PendingTrackEvents, ScheduleTrack, GateTrack) and the deadline
//     monitor's scan (ScanDeadlines);
//   - PullRequests: the pull request of a PASS and the rounds its reviews
//     start (OpenPullRequest, SyncPullRequest);
//   - Candidates: best-of-N runs (RunCandidate, SelectCandidate).
//
// Each embeds Base (clock, observer); those whose steps take claims embed
// Claimant too. Each takes the narrow store interface it uses, declared
// beside it. Remote routes runs to remote workers through the control
// plane, RemoteOutcomes say what the activities waiting on their jobs are
// told, and RemoteCompleter (the control plane's Temporal side) tells them;
// the writes a remote run makes inside the control plane's transactions
// are controlplane.LifecycleHooks.
//
// Workers register every struct (workers.Register): an activity's name is
// its method's, which recorded histories name, so a method keeps its name
// whichever struct it lives on. Workflows call them by method value on a
// nil struct pointer; nothing here imports the workflow SDK.
//
// Each step follows the claims' order (docs/protocol/claims.md): claim the
// resource, write the terminal state in one transaction fenced by the
// claim, then release. Each is idempotent: run again after a partial
// failure or on a retry it finds the stored outcome and returns it,
// writing nothing.
package activities
