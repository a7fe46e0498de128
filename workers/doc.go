// Package workers wires azolla's processes: it builds, from the typed
// configuration, what each process runs and starts it.
//
//   - worker.go: the lifecycle activities and the diazotrophs they run,
//     which workflows and activities run on the lifecycle and deadlines
//     task queues, and Run, the worker process (workers, retention passes,
//     the polling bridge);
//   - bridge.go: the polling bridge of a worker process, a Poller of
//     package workers/bridge;
//   - forges.go: each repository's forge for the pull request steps, and
//     the forge webhook of package workers/webhook, which the worker
//     process serves at PathForgeWebhook;
//   - controlplane.go: the control plane process, its transport, and the
//     Temporal side that settles the activities waiting on remote jobs
//     (activities.RemoteCompleter);
//   - executors.go, patch.go: the sandbox, the executors and the patch
//     diazotroph with its generators and environments;
//   - deadlines.go: the deadline monitor's Schedule;
//   - retention.go, store_retention.go: the workspace and store retention
//     passes.
//
// The services themselves live elsewhere: the polling bridge in
// workers/bridge, the forge webhook in workers/webhook, the activities in
// activities, the workflows in workflows, the rest in internal/. Package
// workers may import all of them, internal/config and the Temporal SDK
// (registration takes the workflow and activity packages' option types);
// only cmd, internal/cli and the integration tests import it.
package workers
