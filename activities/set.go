package activities

// Set is every activity struct a lifecycle worker registers
// (workers.Register): together they serve every activity the workflows
// name.
type Set struct {
	Steps        *Steps
	Tracks       *Tracks
	PullRequests *PullRequests
	Candidates   *Candidates
	RunSlots     *RunSlots
}
