// Package bridge is the polling bridge: the Poller, which reads the store
// the way the seeds' polling workers do (unprocessed TICKET_READY events,
// objectives not yet handed over, PENDING captures without their
// CAPTURE_READY event, track events nobody handed over) and hands what it
// finds to Temporal with SignalWithStart. It is a leader-elected background
// service: one instance per store is active, holding the POLLER claim
// (docs/protocol/claims.md).
//
// Files: poller.go is the service (its settings, what a pass counts, the
// leadership); passes.go the store reads of one pass; handover.go what is
// done with each item found.
//
// It is client-side code, like package starter, so it may use the Temporal
// client (go.temporal.io/sdk/client and go.temporal.io/api); never the
// workflow SDK package, which only workflows use. Besides Temporal it may
// import starter (every start and wake goes through it), workflows (names,
// ids and steps only), and from internal/: domain, the store's roles,
// lifecycle/claim, lifecycle/pause and maintenance (its loop and
// leadership). Not activities, config or package workers: the worker
// process builds a Poller from its configuration and starts it, and
// nothing in internal/ imports this package.
//
// The forge webhook is not here, though it too lets the outside world wake
// a lifecycle: it is an HTTP handler every worker serves, which trusts a
// delivery only after checking its signature, and needs neither Temporal
// nor the store's pending work. It lives in package workers/webhook.
package bridge
