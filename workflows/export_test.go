package workflows

import "testing"

// SetTrackEventsPerRun lowers the events a track finishes per run for the
// test's duration. The test must not be parallel: it changes a package
// variable every track reads.
func SetTrackEventsPerRun(t testing.TB, n int) {
	old := trackEventsPerRun
	trackEventsPerRun = n
	t.Cleanup(func() { trackEventsPerRun = old })
}

// SetupAllowance is how much longer than its budget a patch run may take.
const SetupAllowance = setupAllowance
