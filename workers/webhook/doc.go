// Package webhook is the forge webhook: an HTTP handler for the deliveries
// forges sign with a configured secret (reviews, comments, check results),
// which wakes the lifecycle of each objective a delivery names so that it
// reads its pull request at once instead of at its next poll. The worker
// process mounts it at POST /forge/webhook on the ops address (package
// workers builds it from the configuration).
//
// It is a package of its own rather than a part of workers/bridge, though
// both let the outside world wake a lifecycle: the bridge is a
// leader-elected loop over the store's pending work that talks to Temporal
// itself, while the webhook is a door every worker serves, whose whole job
// is deciding whether a stranger's request is authentic, and which wakes
// through a Waker it is handed. Kept apart, neither carries the other's
// dependencies or its threat model.
//
// What it may import: net/http, internal/forge (parsing and verifying
// deliveries), internal/config (the forges' settings), internal/domain and
// the store's roles. Never Temporal, starter, workflows or activities: the
// caller's Waker (starter.Start) does the waking.
package webhook
