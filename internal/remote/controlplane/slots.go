package controlplane

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/slots"
	"github.com/azolla/azolla/internal/store"
)

// A job enqueued by a run under a concurrency limit holds that run's slots
// (domain.Job.RunSlots, docs/production.md#limits) until it is settled:
// the service renews them with the job's lease, in the job's own writes,
// so whether the worker that enqueued it lives on does not matter. A slot
// is renewed when the job is enqueued, by the reaper while it waits, when
// an attempt starts and with each heartbeat; it is given up when the job
// settles. A waiting job whose slot lapsed (no reaper for longer than its
// lease) takes it back when it starts, if no other run holds it: an
// attempt is not started beside the run that holds it, and its message
// is delivered again later. A running attempt whose slot is lost is
// refused its heartbeat, as for a lost lease, and stops.

// slotTTL is how long a job's renewal keeps its slots: its lease, and
// two reaper passes more, so that an attempt whose worker died keeps its
// slots until the reaper has requeued the job and renews them as it waits.
func (c Config) slotTTL() time.Duration { return c.LeaseTTL + 2*c.ReaperInterval }

// slotHooks holds the jobs' slots around the lifecycle's hooks.
type slotHooks struct {
	Hooks
	ttl time.Duration
}

// errSlotTaken: an attempt was not started because another run holds one
// of its job's run slots; its message is delivered again later.
var errSlotTaken = errors.New("another run holds the job's run slot")

// OnStart takes the job's slots for the attempt, back if they lapsed and
// are free, before anything of the attempt is written.
func (h slotHooks) OnStart(ctx context.Context, q store.Querier, s *store.StartedJobAttempt) error {
	err := slots.KeepFor(ctx, q, s.Job.RunSlots, h.ttl, s.Lease.HeartbeatAt, true)
	if errors.Is(err, domain.ErrLeaseLost) {
		return fmt.Errorf("job %s: %w (%w)", s.Job.JobID, errSlotTaken, err)
	}
	if err != nil {
		return fmt.Errorf("job %s: %w", s.Job.JobID, err)
	}
	return h.Hooks.OnStart(ctx, q, s)
}

// OnRenew renews the job's slots with its lease: a slot another run holds
// now refuses the heartbeat, and the attempt stops.
func (h slotHooks) OnRenew(ctx context.Context, q store.Querier, j *domain.Job, l *domain.JobLease) error {
	if err := slots.KeepFor(ctx, q, j.RunSlots, h.ttl, l.HeartbeatAt, false); err != nil {
		return fmt.Errorf("job %s: %w", j.JobID, err)
	}
	return h.Hooks.OnRenew(ctx, q, j, l)
}

// OnSucceed gives the slots up with the job's outcome.
func (h slotHooks) OnSucceed(ctx context.Context, q store.Querier, j *domain.Job) error {
	if err := h.Hooks.OnSucceed(ctx, q, j); err != nil {
		return err
	}
	return slots.ReleaseFor(ctx, q, j.RunSlots, j.UpdatedAt)
}

// OnDeadLetter gives the slots up with the job.
func (h slotHooks) OnDeadLetter(ctx context.Context, q store.Querier, j *domain.Job) error {
	if err := h.Hooks.OnDeadLetter(ctx, q, j); err != nil {
		return err
	}
	return slots.ReleaseFor(ctx, q, j.RunSlots, j.UpdatedAt)
}

// keepQueuedSlots renews the slots of j, a QUEUED job, taking back any
// that lapsed and are free. One another run holds is left to the attempt's
// start, which waits for it; it is logged, not an error of the caller.
func (s *Service) keepQueuedSlots(ctx context.Context, j *domain.Job, now time.Time) {
	if len(j.RunSlots) == 0 {
		return
	}
	if err := slots.KeepFor(ctx, s.st, j.RunSlots, s.cfg.slotTTL(), now, true); err != nil {
		s.log.Info("queued job's run slot not renewed; its start takes it back once free", "job_id", j.JobID,
			"error", err)
	}
}
