package controlplane

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/internal/maintenance"
	"github.com/azolla/azolla/internal/store"
)

// CodeLeaseExpired is the error code of an attempt the reaper closed
// because its lease expired without a heartbeat.
const CodeLeaseExpired = "LEASE_EXPIRED"

// Reaper repairs, from the database, what crashes and lost messages leave
// behind (see doc.go):
//
//   - RUNNING attempts whose lease expired are closed as EXPIRED; the job
//     is requeued at once (a new enqueue and message) or, on its last
//     attempt or when its Run activity is gone (ErrRunGone),
//     dead-lettered with Hooks.OnDeadLetter in the transaction and its
//     activity failed after it. The expired attempt's message is
//     acknowledged after the commit.
//   - QUEUED jobs whose Run activity is gone are dead-lettered (see
//     Service.deadLetterQueued) rather than left for a worker to run.
//   - QUEUED, available jobs whose message is missing (never written, or
//     gone from the transport: Redis flushed or restarted) get one again,
//     for the same enqueue. A requeue waiting out its backoff gets its
//     message here once it is due.
//   - Settled jobs whose outcome has not reached their activity are
//     notified again.
//   - QUEUED jobs with an activity heartbeat it, so a job waiting for a
//     worker does not time the activity out, and those holding run slots
//     renew them (slots.go). An activity found gone is left alone: the
//     job runs, and its outcome finds no one to tell.
//
// One instance per store is active: the one holding the
// CONTROL_PLANE_REAPER claim, renewed at each pass and kept during it, as
// the lifecycle poller does. Leadership saves work rather than guarding
// correctness: every write the reaper makes is conditional in the store
// (an expiry needs a RUNNING attempt with an expired lease), so two
// reapers at once write each repair once, at worst sending a spare
// message that the claim handler skips.
//
// A failure on one item is logged and counted, and the pass goes on.
type Reaper struct {
	svc  *Service
	loop *maintenance.Loop[ReaperCounts]
}

// ReaperCounts says what one pass did.
type ReaperCounts struct {
	Leader       bool // this instance led; a standby does nothing else
	Batches      int  // pages read from the store
	Expired      int  // attempts closed as EXPIRED
	Requeued     int  // jobs requeued after an expired attempt
	DeadLettered int  // jobs dead-lettered: their last attempt expired, or their Run activity is gone
	RunGone      int  // of those, the jobs whose Run activity is gone (ErrRunGone)
	Republished  int  // QUEUED jobs whose missing message was written again
	Notified     int  // settled jobs whose outcome reached their activity
	Heartbeats   int  // waiting activities of QUEUED jobs kept alive
	Skipped      int  // items found already moved on
	Failed       int  // items whose repair failed: logged, tried again next pass
}

// NewReaper returns the reaper of s. Its leadership lease lasts three
// ReaperIntervals, renewed at every pass.
func NewReaper(s *Service) *Reaper {
	r := &Reaper{svc: s}
	log := s.log
	r.loop = &maintenance.Loop[ReaperCounts]{Name: "reaper", Interval: s.cfg.ReaperInterval, Pass: r.pass, Log: log,
		Leadership: &maintenance.Leadership{Name: "reaper",
			Claims:       claim.NewBridge(s.st, claim.WithClock(s.cfg.Now), claim.WithObserver(s.cfg.Claims)),
			ResourceType: domain.ResourceControlPlaneReaper, ResourceID: domain.ControlPlaneReaperLeadership,
			Owner: s.cfg.InstanceID, TTL: 3 * s.cfg.ReaperInterval, Log: log},
		Passed: func(c ReaperCounts, led bool, err error) {
			c.Leader = led
			s.observer.ReaperPass(c)
			if led && err == nil {
				log.Debug("reaper pass", "batches", c.Batches, "expired", c.Expired, "requeued", c.Requeued,
					"dead_lettered", c.DeadLettered, "run_gone", c.RunGone, "republished", c.Republished, "notified", c.Notified,
					"heartbeats", c.Heartbeats, "skipped", c.Skipped, "failed", c.Failed)
			}
		}}
	return r
}

// Start runs a pass now and then every ReaperInterval in the background,
// until Stop or ctx is done.
func (r *Reaper) Start(ctx context.Context) { r.loop.Start(ctx) }

// Stop ends the passes, waits for the one in flight and gives the
// leadership up, so a standby takes over at its next pass.
func (r *Reaper) Stop() { r.loop.Stop() }

// RunOnce is one pass, if this instance leads: expired leases, then QUEUED
// jobs (dead-lettering those whose Run activity is gone), then settled
// jobs not notified. Only a failed store read, or the
// leadership lost mid-pass, ends it early with an error.
func (r *Reaper) RunOnce(ctx context.Context) (ReaperCounts, error) {
	c, led, err := r.loop.RunOnce(ctx)
	c.Leader = led
	return c, err
}

// pass is one pass of the leader.
func (r *Reaper) pass(ctx context.Context) (ReaperCounts, error) {
	var c ReaperCounts
	now := r.svc.now()
	for _, pass := range []func(context.Context, time.Time, *ReaperCounts) error{
		r.passExpired, r.passQueued, r.passUnnotified,
	} {
		if err := pass(ctx, now, &c); err != nil {
			return c, err
		}
	}
	return c, nil
}

// passExpired closes the attempts whose lease expired. Each one handled
// leaves the listing, so pages are read from the start until one brings
// nothing new (what failed stays listed, and is not tried twice a pass).
func (r *Reaper) passExpired(ctx context.Context, now time.Time, c *ReaperCounts) error {
	batch := r.svc.cfg.BatchSize
	seen := map[string]bool{}
	for {
		page, err := r.svc.st.ListExpiredJobLeases(ctx, store.ExpiredJobLeasesParams{Now: now, Limit: batch})
		if err != nil {
			return fmt.Errorf("list expired job leases: %w", err)
		}
		c.Batches++
		fresh := 0
		for _, l := range page {
			if seen[l.AttemptID] {
				continue
			}
			seen[l.AttemptID], fresh = true, fresh+1
			if err := r.expire(ctx, l, now, c); err != nil {
				if ctx.Err() != nil {
					return err
				}
				c.Failed++
				r.svc.log.Warn("reaper could not expire an attempt", "job_id", l.JobID,
					"attempt_id", l.AttemptID, "error", err)
			}
		}
		if len(page) < batch || fresh == 0 {
			return nil
		}
	}
}

// expire closes one expired attempt and requeues or dead-letters its job.
func (r *Reaper) expire(ctx context.Context, l *domain.JobLease, now time.Time, c *ReaperCounts) error {
	s := r.svc
	j, err := s.st.GetJob(ctx, l.JobID)
	if err != nil {
		return fmt.Errorf("read job: %w", err)
	}
	expired := fmt.Sprintf("attempt %s: lease expired at %s without a heartbeat",
		l.AttemptID, l.LeaseExpiresAt.UTC().Format(time.RFC3339))
	// No backoff: the worker died, the job did not fail.
	next := store.JobNext{Status: domain.JobDeadLettered}
	jerr := &domain.JobError{Code: CodeLeaseExpired, Retryable: true, Message: expired}
	gone := runGone(ctx, s.st, j)
	switch {
	case errors.Is(gone, ErrRunGone):
		jerr = goneError(gone, expired)
	case gone != nil:
		return gone
	case j.AttemptCount < j.MaxAttempts:
		next = store.JobNext{Status: domain.JobQueued, EnqueueID: newUUID(), AvailableAt: now}
	}
	ej, err := s.st.ExpireJobAttempt(ctx, store.ExpireJobAttemptParams{
		JobID:     l.JobID,
		AttemptID: l.AttemptID,
		Error:     jerr,
		Next:      next,
		Now:       now,
		OnExpire: func(q store.Querier, j *domain.Job) error {
			if j.Status == domain.JobDeadLettered {
				return s.hooks.OnDeadLetter(ctx, q, j)
			}
			return nil
		},
	})
	if errors.Is(err, domain.ErrJobStale) {
		c.Skipped++ // settled or heartbeated meanwhile
		return nil
	}
	if err != nil {
		return fmt.Errorf("expire the attempt: %w", err)
	}
	c.Expired++
	if err := r.ackAttempt(ctx, l); err != nil {
		s.log.Warn("acknowledge an expired attempt's message", "job_id", l.JobID, "attempt_id", l.AttemptID, "error", err)
	}
	if ej.Status == domain.JobDeadLettered {
		c.DeadLettered++
		if gone != nil {
			c.RunGone++
			s.log.Info("expired job dead-lettered: its Run activity is gone", "job_id", ej.JobID,
				"work_order_id", ej.WorkOrderID, "reason", gone)
		}
		s.observer.JobDeadLettered()
		if err := s.notify(ctx, ej); err != nil {
			// The unnotified pass below, or the next pass, tries again.
			s.log.Warn("dead-lettered job not yet notified", "job_id", ej.JobID, "error", err)
		}
		return nil
	}
	c.Requeued++
	if err := s.publish(ctx, ej); err != nil {
		// The job is QUEUED and durable; a later pass writes the message.
		s.log.Warn("requeued job's message not written yet", "job_id", ej.JobID, "error", err)
	}
	return nil
}

// ackAttempt acknowledges the message the lease's attempt was claimed
// from, now that its expiry is committed.
func (r *Reaper) ackAttempt(ctx context.Context, l *domain.JobLease) error {
	attempts, err := r.svc.st.ListJobAttempts(ctx, l.JobID)
	if err != nil {
		return fmt.Errorf("list attempts: %w", err)
	}
	for _, a := range attempts {
		if a.AttemptID == l.AttemptID && a.MessageID != "" {
			return r.svc.tr.Ack(ctx, a.Stream, a.MessageID)
		}
	}
	return nil
}

// passQueued dead-letters the QUEUED jobs whose Run activity is gone,
// keeps the activities of the others alive and writes the messages that
// are missing.
func (r *Reaper) passQueued(ctx context.Context, now time.Time, c *ReaperCounts) error {
	s := r.svc
	var after domain.Cursor
	for {
		page, err := s.st.ListJobs(ctx, store.ListJobsParams{Status: domain.JobQueued, After: after, Limit: s.cfg.BatchSize})
		if err != nil {
			return fmt.Errorf("list queued jobs: %w", err)
		}
		c.Batches++
		for _, j := range page {
			after = domain.Cursor{CreatedAt: j.CreatedAt, ID: j.JobID}
			if err := r.queued(ctx, j, now, c); err != nil {
				if ctx.Err() != nil {
					return err
				}
				c.Failed++
				s.log.Warn("reaper could not look after a queued job", "job_id", j.JobID, "error", err)
			}
		}
		if len(page) < s.cfg.BatchSize {
			return nil
		}
	}
}

func (r *Reaper) queued(ctx context.Context, j *domain.Job, now time.Time, c *ReaperCounts) error {
	s := r.svc
	switch gone := runGone(ctx, s.st, j); {
	case errors.Is(gone, ErrRunGone):
		return r.deadLetterGone(ctx, j, now, gone, c)
	case gone != nil:
		return gone
	}
	s.keepQueuedSlots(ctx, j, now)
	var errs []error
	if j.Activity != nil {
		switch err := s.acts.Heartbeat(ctx, *j.Activity); {
		case err == nil:
			c.Heartbeats++
		case errors.Is(err, ErrActivityGone):
			s.log.Debug("queued job's activity is gone; the job is left to run", "job_id", j.JobID)
		default:
			errs = append(errs, fmt.Errorf("heartbeat the activity: %w", err))
		}
	}
	if j.AvailableAt.After(now) {
		return errors.Join(errs...)
	}
	missing, err := r.messageMissing(ctx, j, now)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	if missing {
		if err := s.publish(ctx, j); err != nil {
			return errors.Join(append(errs, err)...)
		}
		c.Republished++
		s.log.Info("queued job's message was missing; written again", "job_id", j.JobID, "enqueue_id", j.EnqueueID)
	}
	return errors.Join(errs...)
}

// deadLetterGone dead-letters a QUEUED job whose Run activity is gone. One
// waiting out a requeue's backoff cannot be taken yet and is left to a
// later pass; one a worker claimed meanwhile is its attempt's, which the
// heartbeat then refuses, and the expiry dead-letters.
func (r *Reaper) deadLetterGone(ctx context.Context, j *domain.Job, now time.Time, gone error, c *ReaperCounts) error {
	s := r.svc
	if j.AvailableAt.After(now) {
		return nil
	}
	dj, err := s.deadLetterQueued(ctx, j, gone)
	if errors.Is(err, domain.ErrJobStale) {
		c.Skipped++
		return nil
	}
	if err != nil {
		return err
	}
	c.DeadLettered++
	c.RunGone++
	s.observer.JobDeadLettered()
	s.log.Info("queued job dead-lettered: its Run activity is gone", "job_id", dj.JobID,
		"work_order_id", dj.WorkOrderID, "reason", gone)
	if err := s.notify(ctx, dj); err != nil {
		s.log.Warn("dead-lettered job not yet notified", "job_id", dj.JobID, "error", err)
	}
	return nil
}

// messageMissing reports whether an available QUEUED job lacks its
// message. With no message id yet, a requeue deferred by its backoff
// (available after it was written) has no one else to write it; any other
// job's enqueuer had MessageGrace to do so. With one, the transport says
// whether it still exists.
func (r *Reaper) messageMissing(ctx context.Context, j *domain.Job, now time.Time) (bool, error) {
	if j.MessageID == "" {
		return j.AvailableAt.After(j.UpdatedAt) || !j.UpdatedAt.Add(r.svc.cfg.MessageGrace).After(now), nil
	}
	st, err := r.svc.tr.State(ctx, j.Stream, j.MessageID)
	if err != nil {
		return false, fmt.Errorf("look the message up: %w", err)
	}
	return !st.Exists, nil
}

// passUnnotified tells activities the outcomes that did not reach them.
func (r *Reaper) passUnnotified(ctx context.Context, _ time.Time, c *ReaperCounts) error {
	s := r.svc
	var after domain.Cursor
	for {
		page, err := s.st.ListJobs(ctx, store.ListJobsParams{Unnotified: true, After: after, Limit: s.cfg.BatchSize})
		if err != nil {
			return fmt.Errorf("list unnotified jobs: %w", err)
		}
		c.Batches++
		for _, j := range page {
			after = domain.Cursor{CreatedAt: j.CreatedAt, ID: j.JobID}
			if err := s.notify(ctx, j); err != nil {
				if ctx.Err() != nil {
					return err
				}
				c.Failed++
				s.log.Warn("reaper could not notify a settled job's activity", "job_id", j.JobID, "error", err)
				continue
			}
			c.Notified++
		}
		if len(page) < s.cfg.BatchSize {
			return nil
		}
	}
}
