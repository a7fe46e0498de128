package claim

// Outcome is what an Acquire came to.
type Outcome string

// Outcomes of Acquire.
const (
	// Acquired: the claim was free (no row, or released by its holder).
	Acquired Outcome = "acquired"
	// TakenOver: the claim's lease had lapsed without a release; its
	// holder crashed or stalled, and this owner took the claim from it.
	TakenOver Outcome = "takeover"
	// Refused: another owner holds a live lease.
	Refused Outcome = "refused"
)

// Observer is told every Acquire's outcome (metrics). It must not block.
type Observer interface {
	ObserveAcquire(resourceType string, outcome Outcome)
}

// WithObserver reports every Acquire to o. Telling a takeover from a plain
// acquisition costs one primary-key read of the claim row before the
// acquiring statement, made only when an observer is set; a row that
// changes between the two is counted by what the read saw.
func WithObserver(o Observer) Option { return func(b *Bridge) { b.observer = o } }
