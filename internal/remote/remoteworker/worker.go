package remoteworker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/azolla/azolla/internal/remote/controlplane"
	"github.com/azolla/azolla/internal/textsafe"
)

// Worker defaults.
const (
	DefaultMaxWait       = 20 * time.Second
	DefaultShutdownGrace = 30 * time.Second
	// defaultLeaseTTL and the heartbeat interval derived from it stand in
	// for a claim response that names neither.
	defaultLeaseTTL = 60 * time.Second
	// maxWorkerIDLen is the worker id's bound in the schemas.
	maxWorkerIDLen = 256
)

// EnvWorkerID names the worker when Options.WorkerID is empty.
const EnvWorkerID = "AZOLLA_WORKER_ID"

// Options shape a Worker.
type Options struct {
	// ControlPlaneURL is the control plane's http(s) base URL.
	ControlPlaneURL string
	// TokenFile holds the worker's bearer token (see ReadTokenFile). Only
	// an http control plane on loopback (azolla dev's) may do without.
	TokenFile string
	// CAFile and ServerName verify an https control plane; CertFile and
	// KeyFile are the client certificate one requiring mTLS is shown (see
	// ClientOptions).
	CAFile, ServerName, CertFile, KeyFile string
	// WorkerID is the name the token was created for: the control plane
	// refuses a request whose worker_id is not the token's.
	WorkerID string
	// Streams are claimed from in priority order. Empty: the executor's
	// own (an Executor with a Streams method), else an error.
	Streams []string
	// MaxWait is a claim's long-poll wait (the server caps it); default
	// DefaultMaxWait.
	MaxWait time.Duration
	// ShutdownGrace is how long a job may run on once Run's context ends
	// before it is cancelled and failed, retryable; default
	// DefaultShutdownGrace.
	ShutdownGrace time.Duration
	// Executor runs the jobs.
	Executor Executor
	// Logger receives the worker's log; nil discards.
	Logger *slog.Logger
	// Retry and RequestTimeout tune the client (see ClientOptions).
	Retry          RetryPolicy
	RequestTimeout time.Duration
}

// Worker claims jobs from a control plane and runs them one at a time.
type Worker struct {
	client  *Client
	id      string
	streams []string
	maxWait time.Duration
	grace   time.Duration
	exec    Executor
	log     *slog.Logger
}

// New checks o, reads the token file and returns a Worker.
func New(o Options) (*Worker, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.Executor == nil {
		return nil, errors.New("remote worker: no executor")
	}
	if err := checkWorkerID(o.WorkerID); err != nil {
		return nil, err
	}
	streams := o.Streams
	if len(streams) == 0 {
		if s, ok := o.Executor.(interface{ Streams() []string }); ok {
			streams = s.Streams()
		}
	}
	if len(streams) == 0 {
		return nil, errors.New("remote worker: no streams to claim from")
	}
	seen := map[string]bool{}
	for _, s := range streams {
		if err := controlplane.ValidateStream(s); err != nil {
			return nil, fmt.Errorf("remote worker: %w", err)
		}
		if seen[s] {
			return nil, fmt.Errorf("remote worker: stream %q listed twice", s)
		}
		seen[s] = true
	}
	var token string
	if o.TokenFile != "" {
		var err error
		if token, err = ReadTokenFile(o.TokenFile, log); err != nil {
			return nil, err
		}
	}
	client, err := NewClient(ClientOptions{BaseURL: o.ControlPlaneURL, Token: token, CAFile: o.CAFile,
		ServerName: o.ServerName, CertFile: o.CertFile, KeyFile: o.KeyFile, RequestTimeout: o.RequestTimeout, Retry: o.Retry, Log: log})
	if err != nil {
		return nil, err
	}
	w := &Worker{client: client, id: o.WorkerID, streams: slices.Clone(streams), maxWait: o.MaxWait,
		grace: o.ShutdownGrace, exec: o.Executor, log: log.With("worker_id", o.WorkerID)}
	if w.maxWait <= 0 {
		w.maxWait = DefaultMaxWait
	}
	if w.grace <= 0 {
		w.grace = DefaultShutdownGrace
	}
	return w, nil
}

// checkWorkerID refuses an id the control plane would.
func checkWorkerID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("remote worker: no worker id: give the name its token was created for (--worker-id or $%s)",
			EnvWorkerID)
	case len(id) > maxWorkerIDLen:
		return fmt.Errorf("remote worker: worker id is %d bytes, at most %d", len(id), maxWorkerIDLen)
	}
	if err := textsafe.CheckLine(id); err != nil {
		return fmt.Errorf("remote worker: worker id: %w", err)
	}
	return nil
}

// DefaultWorkerID is $AZOLLA_WORKER_ID read through getenv.
func DefaultWorkerID(getenv func(string) string) string {
	if getenv == nil {
		getenv = os.Getenv
	}
	return getenv(EnvWorkerID)
}

// ID is the worker's id; Streams its streams in priority order; URL the
// control plane's.
func (w *Worker) ID() string        { return w.id }
func (w *Worker) Streams() []string { return slices.Clone(w.streams) }
func (w *Worker) URL() string       { return w.client.URL() }

// Run claims and runs jobs until ctx ends. A job running then is given the
// shutdown grace to finish and is completed; past it, it is cancelled and
// failed, retryable. Run returns nil after a shutdown, and an error when
// the control plane refuses the worker (a revoked token, a worker id that
// is not the token's) or answers what the worker cannot read.
//
// A claim in flight when ctx ends is abandoned: if the control plane gave
// it a job at that moment, the job's lease runs out and the reaper
// requeues it.
func (w *Worker) Run(ctx context.Context) error {
	w.log.Info("remote worker claiming", "control_plane", w.client.URL(), "streams", w.streams,
		"max_wait", w.maxWait)
	for ctx.Err() == nil {
		if _, err := w.runOnce(ctx); err != nil {
			return err
		}
	}
	w.log.Info("remote worker stopped")
	return nil
}

// runOnce claims once and runs the job it got, if any. It reports whether
// there was one.
func (w *Worker) runOnce(ctx context.Context) (bool, error) {
	job, err := w.client.Claim(ctx, controlplane.ClaimRequest{WorkerID: w.id, Streams: w.streams,
		MaxWaitMS: int(w.maxWait.Milliseconds())})
	switch {
	case err == nil && job.Claimed:
		// Run even if ctx has just ended: the job is this worker's now, and
		// gets the shutdown grace like any other.
		w.run(ctx, job, time.Now())
		return true, nil
	case ctx.Err() != nil, err == nil:
		return false, nil
	default:
		return false, fmt.Errorf("remote worker %s: %w", w.id, err)
	}
}
