package workers

import (
	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/starter"
	"github.com/azolla/azolla/workers/bridge"
)

// newPoller builds the worker process's polling bridge from o: its store
// and Temporal client, lifecycle.poll_interval, claim.lease_ttl (its
// leadership lease), tasks.track, and an owner id from o.Identity. claims
// is the claim bridge the lifecycle's activities use, so both count in
// the same metrics.
func newPoller(o Options, claims *claim.Bridge) *bridge.Poller {
	return &bridge.Poller{Store: o.Store, Claims: claims, Client: o.Client,
		// No wait for search attributes: the poller tries again on its
		// next pass rather than hold this one for every objective.
		Starter: &starter.Starter{Client: o.Client, Store: o.Store, TaskQueue: o.Config.Temporal.TaskQueue,
			AttributesWait: -1},
		Interval: o.Config.Lifecycle.PollInterval, LeaseTTL: o.Config.Claim.LeaseTTL,
		OwnerID: o.Identity + ":poller", Log: o.Log, Track: o.Config.Tasks.Track}
}
