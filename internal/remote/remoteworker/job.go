package remoteworker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/azolla/azolla/internal/remote/controlplane"
)

// Why a job's contexts end (context.Cause of the executor's context).
var (
	// errSettled: the attempt was completed or failed (or given up on);
	// heartbeats stop.
	errSettled = errors.New("attempt settled")
	// ErrLeaseExpired is the cause of a job's cancellation when heartbeats
	// failed transiently until the lease would have run out.
	ErrLeaseExpired = errors.New("lease expired: no heartbeat got through in time")
	// ErrShutdownGrace is the cause of a job's cancellation when the worker
	// is stopping and the job outlived the shutdown grace.
	ErrShutdownGrace = errors.New("worker shutting down: the job outlived the shutdown grace")
)

// LeaseLostError is the cause of a job's cancellation when the control
// plane refused a heartbeat: the lease is another attempt's, the job moved
// on, or its activity no longer wants the result.
type LeaseLostError struct{ Err error }

func (e *LeaseLostError) Error() string { return "lease lost: " + e.Err.Error() }
func (e *LeaseLostError) Unwrap() error { return e.Err }

// run executes one claimed job and settles it.
//
// The lease context lives apart from ctx (a shutdown must not stop the
// heartbeats of the job it waits for) and ends when the lease is lost:
// the executor's context, derived from it, ends too, and nothing is
// written, since the lease is the right to settle. Otherwise the result
// is completed, or the error failed, with retries until either settles
// or the lease is lost.
func (w *Worker) run(ctx context.Context, job *controlplane.ClaimResponse, claimedAt time.Time) {
	log := w.log.With("job_id", job.JobID, "attempt_id", job.AttemptID, "stream", job.Stream.Name)
	ttl, interval := leaseTimes(job)
	log.Info("job claimed", "lease_ttl", ttl, "heartbeat_interval", interval)

	leaseCtx, loseLease := context.WithCancelCause(context.WithoutCancel(ctx))
	hbDone := make(chan struct{})
	var settling atomic.Bool
	go func() {
		defer close(hbDone)
		w.keepLease(leaseCtx, loseLease, &settling, log, job, claimedAt.Add(ttl), ttl, interval)
	}()
	defer func() {
		loseLease(errSettled) // stops the heartbeats
		<-hbDone
	}()

	execCtx, stopExec := context.WithCancelCause(leaseCtx)
	defer stopExec(nil)
	execDone := make(chan struct{})
	go w.watchShutdown(ctx, execDone, stopExec, log)
	result, err := w.exec.Execute(execCtx, job.Payload)
	close(execDone)

	if cause := context.Cause(leaseCtx); cause != nil {
		log.Warn("job stopped and nothing written: the lease is lost", "cause", cause)
		return
	}
	// From here a refused heartbeat is expected (the settlement released
	// the lease); it still ends the retries of a settlement the control
	// plane will refuse anyway.
	settling.Store(true)
	if err == nil {
		w.complete(leaseCtx, log, job, result)
		return
	}
	if errors.Is(context.Cause(execCtx), ErrShutdownGrace) {
		err = Retryable(CodeWorkerShutdown, fmt.Errorf("%w: %w", ErrShutdownGrace, err))
	}
	w.fail(leaseCtx, log, job, err)
}

// leaseTimes are the lease TTL and heartbeat interval of the claim, with
// defaults for what it left out and the interval kept below the TTL.
func leaseTimes(job *controlplane.ClaimResponse) (ttl, interval time.Duration) {
	ttl = time.Duration(job.LeaseTTLSeconds) * time.Second
	if ttl <= 0 {
		ttl = defaultLeaseTTL
	}
	interval = time.Duration(job.HeartbeatIntervalSeconds) * time.Second
	if interval <= 0 || interval >= ttl {
		interval = ttl / 3
	}
	return ttl, interval
}

// watchShutdown gives the running job the shutdown grace once ctx ends,
// then cancels it.
func (w *Worker) watchShutdown(ctx context.Context, execDone <-chan struct{}, stop context.CancelCauseFunc,
	log *slog.Logger) {
	select {
	case <-execDone:
		return
	case <-ctx.Done():
	}
	log.Info("shutting down: the running job may finish", "grace", w.grace)
	t := time.NewTimer(w.grace)
	defer t.Stop()
	select {
	case <-execDone:
	case <-t.C:
		log.Warn("shutdown grace passed: cancelling the job", "grace", w.grace)
		stop(ErrShutdownGrace)
	}
}

// keepLease heartbeats every interval until ctx ends. A refusal loses the
// lease at once; transient failures are retried until the lease would
// have expired (a local, conservative estimate: the send time of the last
// heartbeat that got through plus the TTL), and then lose it. Once the
// job is settling, a refusal is no news and is logged quietly.
func (w *Worker) keepLease(ctx context.Context, lose context.CancelCauseFunc, settling *atomic.Bool, log *slog.Logger,
	job *controlplane.ClaimResponse, expires time.Time, ttl, interval time.Duration) {
	req := controlplane.HeartbeatRequest{WorkerID: w.id, JobID: job.JobID, LeaseToken: job.LeaseToken}
	t := time.NewTimer(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		sent := time.Now()
		hctx, cancel := context.WithDeadlineCause(ctx, expires, ErrLeaseExpired)
		resp, err := w.client.Heartbeat(hctx, req)
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case err == nil && resp.OK:
			expires = sent.Add(ttl)
			log.Debug("heartbeat", "lease_expires_at", resp.LeaseExpiresAt)
		case err == nil || refused(err):
			if err == nil {
				err = errors.New("heartbeat answered ok=false")
			}
			lose(&LeaseLostError{Err: err})
			level := slog.LevelWarn
			if settling.Load() {
				level = slog.LevelDebug
			}
			log.Log(ctx, level, "heartbeat refused: cancelling the job", "code", ErrorCode(err), "error", err)
			return
		default:
			lose(fmt.Errorf("%w: %w", ErrLeaseExpired, err))
			log.Warn("no heartbeat got through before the lease expired: cancelling the job", "error", err)
			return
		}
		t.Reset(interval)
	}
}

// complete sends the result, retrying transient failures while the lease
// holds.
func (w *Worker) complete(ctx context.Context, log *slog.Logger, job *controlplane.ClaimResponse, result []byte) {
	resp, err := w.client.Complete(ctx, controlplane.CompleteRequest{WorkerID: w.id, JobID: job.JobID,
		AttemptID: job.AttemptID, LeaseToken: job.LeaseToken, Stream: job.Stream.Name,
		MessageID: job.Stream.MessageID, Result: result})
	switch {
	case ErrorCode(err) == controlplane.CodeCancelled:
		log.Warn("job done but its result refused: the lifecycle no longer waits for it; nothing was written "+
			"and the control plane dead-letters the job", "code", ErrorCode(err), "error", err)
	case err != nil:
		log.Warn("job done but not completed: the control plane will requeue it when its lease expires",
			"code", ErrorCode(err), "error", err)
	case !resp.OK:
		log.Warn("job done but the control plane did not take the result", "ack", resp.Ack)
	default:
		log.Info("job completed", "ack", resp.Ack)
	}
}

// fail reports err, retrying transient failures while the lease holds.
func (w *Worker) fail(ctx context.Context, log *slog.Logger, job *controlplane.ClaimResponse, err error) {
	je := jobError(err)
	log.Warn("job failed", "code", je.Code, "retryable", je.Retryable, "error", err)
	resp, ferr := w.client.Fail(ctx, controlplane.FailRequest{WorkerID: w.id, JobID: job.JobID,
		AttemptID: job.AttemptID, LeaseToken: job.LeaseToken, Stream: job.Stream.Name,
		MessageID: job.Stream.MessageID, Error: je})
	switch {
	case ferr != nil:
		log.Warn("job failure not reported: the control plane will requeue it when its lease expires",
			"code", ErrorCode(ferr), "error", ferr)
	case !resp.OK:
		log.Warn("the control plane did not take the job's failure", "ack", resp.Ack)
	default:
		log.Info("job failure reported", "ack", resp.Ack, "requeued", resp.Requeued, "dlq", resp.DLQ)
	}
}
