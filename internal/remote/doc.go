// Package remote groups the remote-worker path (docs/protocol/control-plane.md):
//
//   - controlplane: the HTTP service remote workers long-poll for jobs
//     (claim, heartbeat, complete, fail), its transports (dbqueue,
//     redisstream), the reaper that expires lapsed leases, and the
//     lifecycle's writes inside a job's transactions (LifecycleHooks: the
//     WORKORDER or CANDIDATE claim held for the remote worker, the output
//     bundle or candidate record its run leaves);
//   - remoteworker: the worker side, which runs a job's executor on a
//     machine with no inbound port, no database and no Temporal access.
//
// "Claim" here is the protocol's word for taking a job by long poll; it is
// not the claim table of package lifecycle/claim (docs/glossary.md).
//
// What they may import: domain, the store's roles (the control plane
// only), the executor group, maintenance (the reaper's and the worker's
// periodic passes), lifecycle/claim, strictjson, textsafe and tlsfiles.
// Never the CLI, workflows or Temporal: the activities that complete a
// remote job live beside the other activities.
package remote
