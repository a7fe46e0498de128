package audit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/remote/controlplane"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/schemas"
)

// MessageStates is what job-message-pending-while-running asks of the
// control plane's transport; controlplane.Transport has it.
type MessageStates interface {
	State(ctx context.Context, stream, messageID string) (controlplane.MessageState, error)
}

// WithMessages gives the audit the transport the control plane runs on, for
// job-message-pending-while-running. Without it that rule is skipped.
func WithMessages(m MessageStates) Option { return func(o *options) { o.messages = m } }

// StoreMessages is the database transport's view of its messages, read
// from the store: a message exists while its row does (acknowledging
// deletes it) and is pending once delivered.
type StoreMessages struct {
	Store interface {
		GetJobMessage(ctx context.Context, stream, messageID string) (*domain.JobMessage, error)
	}
}

// State implements MessageStates.
func (m StoreMessages) State(ctx context.Context, stream, messageID string) (controlplane.MessageState, error) {
	msg, err := m.Store.GetJobMessage(ctx, stream, messageID)
	if errors.Is(err, domain.ErrNotFound) {
		return controlplane.MessageState{}, nil
	}
	if err != nil {
		return controlplane.MessageState{}, err
	}
	return controlplane.MessageState{Exists: true, Pending: msg.DeliveredAt != nil}, nil
}

// jobReader is the part of store.JobStore the audit reads.
type jobReader interface {
	GetJob(ctx context.Context, jobID string) (*domain.Job, error)
	ListJobs(ctx context.Context, p store.ListJobsParams) ([]*domain.Job, error)
	ListJobAttempts(ctx context.Context, jobID string) ([]*domain.JobAttempt, error)
	ListJobLeases(ctx context.Context, jobID string) ([]*domain.JobLease, error)
}

// jobPage is how many jobs one ListJobs call reads.
const jobPage = 500

// Reasons a job rule is skipped, as Report.Skipped says them.
const (
	skipNoJobs      = "job rules: the store offers no jobs (store.JobStore)"
	skipNoTransport = RuleJobMessagePending + ": no transport given"
)

// loadJobs reads every job with its attempts and leases, in pages, and
// then asks m about the message each RUNNING attempt was claimed from. It
// returns the reasons of what it could not check.
func (s *state) loadJobs(ctx context.Context, q Reader, m MessageStates) (skipped []string, err error) {
	jr, ok := q.(jobReader)
	if !ok {
		return []string{skipNoJobs}, nil
	}
	s.attempts, s.leases = map[string][]*domain.JobAttempt{}, map[string][]*domain.JobLease{}
	var after domain.Cursor
	for {
		page, err := jr.ListJobs(ctx, store.ListJobsParams{After: after, Limit: jobPage})
		if err != nil {
			return nil, err
		}
		for _, j := range page {
			if s.attempts[j.JobID], err = jr.ListJobAttempts(ctx, j.JobID); err != nil {
				return nil, err
			}
			if s.leases[j.JobID], err = jr.ListJobLeases(ctx, j.JobID); err != nil {
				return nil, err
			}
		}
		s.jobs = append(s.jobs, page...)
		if len(page) < jobPage {
			break
		}
		last := page[len(page)-1]
		after = domain.Cursor{CreatedAt: last.CreatedAt, ID: last.JobID}
	}
	if m == nil {
		return []string{skipNoTransport}, nil
	}
	return nil, s.loadMessages(ctx, jr, m)
}

// lostMessage is a RUNNING attempt whose message the transport no longer
// holds pending, still RUNNING when the job was read again.
type lostMessage struct {
	job     *domain.Job
	attempt *domain.JobAttempt
	state   controlplane.MessageState
}

// loadMessages asks the transport about the message of every RUNNING
// attempt of a RUNNING job. A message that is not pending is only kept
// if its job, read again after the transport answered, is still RUNNING
// the same attempt: a settle commits first and acknowledges after, so a
// job settled (or expired and requeued) since the first read would
// otherwise be reported for an acknowledgement that was right.
func (s *state) loadMessages(ctx context.Context, jr jobReader, m MessageStates) error {
	s.messagesRead = true
	for _, j := range s.jobs {
		if j.Status != domain.JobRunning {
			continue
		}
		for _, a := range s.attempts[j.JobID] {
			if a.Status != domain.AttemptRunning {
				continue
			}
			s.messagesChecked++
			st, err := m.State(ctx, a.Stream, a.MessageID)
			if err != nil {
				return fmt.Errorf("read the state of message %s of stream %s: %w", a.MessageID, a.Stream, err)
			}
			if st.Exists && st.Pending {
				continue
			}
			now, err := jr.GetJob(ctx, j.JobID)
			if errors.Is(err, domain.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if now.Status != domain.JobRunning || now.AttemptCount != j.AttemptCount {
				continue // it moved on: the acknowledgement followed a commit
			}
			s.lostMessages = append(s.lostMessages, lostMessage{job: now, attempt: a, state: st})
		}
	}
	return nil
}

// jobOneOpenAttempt: a message delivered twice never opens a second attempt
// of a job that runs or is settled (docs/protocol/control-plane.md). A
// job has at most one RUNNING attempt; a RUNNING job has exactly one, and a
// job in any other status none (an attempt closes in the transaction that
// moves its job on).
func jobOneOpenAttempt(s *state, r recorder) {
	for _, j := range s.jobs {
		r.checked(1)
		var open []string
		for _, a := range s.attempts[j.JobID] {
			if a.Status == domain.AttemptRunning {
				open = append(open, attemptLabel(a))
			}
		}
		switch {
		case len(open) > 1:
			r.violation(jobResource(j), "has %d RUNNING attempts: %s", len(open), strings.Join(open, ", "))
		case j.Status == domain.JobRunning && len(open) == 0:
			r.violation(jobResource(j), "is %s without a RUNNING attempt", j.Status)
		case j.Status != domain.JobRunning && len(open) > 0:
			r.violation(jobResource(j), "is %s but its %s is RUNNING", j.Status, open[0])
		}
	}
}

// jobSucceededOnce: completing an attempt twice writes nothing the second
// time (docs/protocol/control-plane.md#rules): a SUCCEEDED job has exactly one SUCCEEDED attempt, and a job
// in another status none.
func jobSucceededOnce(s *state, r recorder) {
	for _, j := range s.jobs {
		r.checked(1)
		var won []string
		for _, a := range s.attempts[j.JobID] {
			if a.Status == domain.AttemptSucceeded {
				won = append(won, attemptLabel(a))
			}
		}
		switch {
		case j.Status == domain.JobSucceeded && len(won) != 1:
			r.violation(jobResource(j), "is %s with %d SUCCEEDED attempts%s", j.Status, len(won), listed(won))
		case j.Status != domain.JobSucceeded && len(won) > 0:
			r.violation(jobResource(j), "is %s but has SUCCEEDED attempts: %s", j.Status, strings.Join(won, ", "))
		}
	}
}

// jobNoLiveLeaseWhenSettled: the lease is released in the transaction that
// settles the job (docs/protocol/control-plane.md#a-jobs-life). No live lease on a settled job, at most
// one live lease per job, and a live lease belongs to a RUNNING attempt.
func jobNoLiveLeaseWhenSettled(s *state, r recorder) {
	for _, j := range s.jobs {
		r.checked(1)
		status := map[string]string{}
		for _, a := range s.attempts[j.JobID] {
			status[a.AttemptID] = a.Status
		}
		var live []string
		for _, l := range s.leases[j.JobID] {
			if !l.Live(s.now) {
				continue
			}
			held := fmt.Sprintf("the lease of attempt %s (worker %s, until %s)", l.AttemptID, l.WorkerID, l.LeaseExpiresAt.Format(timeLayout))
			live = append(live, held)
			if st := status[l.AttemptID]; st != domain.AttemptRunning && !domain.JobSettled(j.Status) {
				r.violation(jobResource(j), "has %s live on an attempt that is %s", held, cmp.Or(st, "missing"))
			}
		}
		if domain.JobSettled(j.Status) && len(live) > 0 {
			r.violation(jobResource(j), "is %s with %s live", j.Status, strings.Join(live, " and "))
		} else if len(live) > 1 {
			r.violation(jobResource(j), "has %d live leases: %s", len(live), strings.Join(live, "; "))
		}
	}
}

// jobMessagePending: a message is acknowledged only after the database has
// committed the job's outcome, requeue or dead letter
// (docs/protocol/control-plane.md#rules). The message
// a RUNNING attempt was claimed from is still pending in the transport.
func jobMessagePending(s *state, r recorder) {
	if !s.messagesRead {
		return
	}
	r.checked(s.messagesChecked)
	for _, lm := range s.lostMessages {
		what := "is gone from the transport (acknowledged, trimmed or lost)"
		if lm.state.Exists {
			what = "is in its stream but not pending (acknowledged or never delivered)"
		}
		r.violation(jobResource(lm.job), "is %s, but message %s of stream %s, which its %s was claimed from, %s",
			lm.job.Status, lm.attempt.MessageID, lm.attempt.Stream, attemptLabel(lm.attempt), what)
	}
}

// jobSchema: every job, attempt and lease row is valid against its schema.
func jobSchema(s *state, r recorder) {
	for _, j := range s.jobs {
		r.checked(1)
		if err := schemas.Validate(schemas.Job, j); err != nil {
			r.violation(jobResource(j), "%v", err)
		}
		for _, a := range s.attempts[j.JobID] {
			r.checked(1)
			if err := schemas.Validate(schemas.JobAttempt, a); err != nil {
				r.violation("job_attempt "+a.AttemptID, "%v", err)
			}
		}
		for _, l := range s.leases[j.JobID] {
			r.checked(1)
			if err := schemas.Validate(schemas.JobLease, withoutToken(l)); err != nil {
				r.violation("job_lease "+l.AttemptID, "%v", err)
			}
		}
	}
}

// leaseTokenShape is the schema's pattern of a lease token, compiled on
// first use: its counted repetition is a program of about 16 KB that
// commands other than verify would build at start.
var leaseTokenShape = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)
})

// withoutToken returns a copy of l whose token is a stand-in of the same
// validity, so that no message of the audit can ever quote a live token.
func withoutToken(l *domain.JobLease) *domain.JobLease {
	c := *l
	if leaseTokenShape().MatchString(c.LeaseToken) {
		c.LeaseToken = strings.Repeat("x", 43)
	} else {
		c.LeaseToken = "(not a lease token)"
	}
	return &c
}

func jobResource(j *domain.Job) string { return "job " + j.JobID }

func attemptLabel(a *domain.JobAttempt) string {
	return fmt.Sprintf("attempt %d (%s, worker %s)", a.AttemptNumber, a.AttemptID, a.WorkerID)
}

// listed is ": a, b" or "".
func listed(items []string) string {
	if len(items) == 0 {
		return ""
	}
	return ": " + strings.Join(items, ", ")
}
