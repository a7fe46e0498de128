package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/azolla/azolla/activities"
)

// changeSetupAllowance: a PATCH_DIAZOTROPH workorder's run, and each of its
// candidates, may take setupAllowance longer than its budget: preparing
// its repository's environment (the setup phase, package environment) is
// not the agent's time and the budget does not count it. Like
// changePullRequest it is asked where it applies, before such a workorder
// runs: runs of other diazotrophs, and every run recorded before the
// change, carry no marker.
const changeSetupAllowance = "setup-allowance"

// setupAllowance is the longest a setup may take (config.MaxSetupBudget):
// a generous start-to-close, since the heartbeat timeout, not this, finds
// a dead worker.
const setupAllowance = 6 * time.Hour

// patchType is PATCH_DIAZOTROPH's diazotroph_type.
const patchType = "PATCH_DIAZOTROPH"

// runAllowance is how much longer than its budget wo's run may take.
func runAllowance(ctx workflow.Context, wo activities.WorkOrderRef) time.Duration {
	if wo.DiazotrophType != patchType {
		return 0
	}
	if workflow.GetVersion(ctx, changeSetupAllowance, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return 0
	}
	return setupAllowance
}
