package controlplane

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/redact"
	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/internal/store"
)

// Defaults of Config: short leases, extended by heartbeats.
const (
	DefaultLeaseTTL          = 60 * time.Second
	DefaultHeartbeatInterval = 20 * time.Second
	DefaultMaxAttempts       = 3
	DefaultReaperInterval    = 10 * time.Second
	// MaxClaimWait caps a claim's long-poll whatever the worker asks, so
	// a claim never outlives a proxy's or the Redis client's read timeout.
	MaxClaimWait = 30 * time.Second
	// DefaultMessageGrace is how long a QUEUED job may lack a message
	// before the reaper writes one: the enqueuer writes it right after the
	// row, so only a crash in between leaves it missing longer.
	DefaultMessageGrace = 30 * time.Second
	// DefaultBatchSize bounds each of the reaper's store reads.
	DefaultBatchSize = 200
	// DefaultMaxBodyBytes bounds a request body: room for a patch's
	// result, not for a flood.
	DefaultMaxBodyBytes = 4 << 20
)

// Store is what the control plane needs of the store: the job records it
// moves, the run records and candidates that say a job's Run activity is
// gone, and the claims its reaper leads by.
type Store interface {
	store.JobStore
	store.RunQuerier
	store.CandidateQuerier
	claim.Store
}

// Config tunes a Service. Zero values take the defaults above.
type Config struct {
	// LeaseTTL is how long a claim or heartbeat keeps a job's lease.
	LeaseTTL time.Duration
	// HeartbeatInterval is what workers are told to heartbeat at; keep it
	// at most a third of LeaseTTL so two heartbeats may fail.
	HeartbeatInterval time.Duration
	// MaxWait caps a claim's max_wait_ms; never above MaxClaimWait.
	MaxWait time.Duration
	// MaxAttempts is a job's default number of attempts.
	MaxAttempts int
	// Backoff is the delay before attempt+1 after attempt failed
	// retryably (attempt counts from 1); nil means DefaultBackoff.
	Backoff func(attempt int) time.Duration
	// ReaperInterval is the time between reaper passes.
	ReaperInterval time.Duration
	// MessageGrace: see DefaultMessageGrace.
	MessageGrace time.Duration
	// BatchSize bounds each of the reaper's store reads.
	BatchSize int
	// MaxBodyBytes bounds a request body; a larger one is refused with
	// 413 before anything is read into memory past the limit.
	MaxBodyBytes int64
	// InstanceID names this control-plane instance: the transport consumer
	// and the reaper's claim owner. Empty means host:pid.
	InstanceID string
	// Now is the clock of every lease and timestamp; nil means time.Now.
	Now func() time.Time
	// Log receives what the service does not answer to a caller; nil
	// discards it.
	Log *slog.Logger
	// Observer is told of dead letters and reaper passes (metrics); nil
	// tells no one.
	Observer Observer
	// Claims, when set, observes the reaper's leadership claim.
	Claims claim.Observer
	// Redact hides this process's secrets in the results and errors
	// workers send, before they are written; nil redacts nothing.
	Redact *redact.Redactor
}

// Observer is told what the control plane did, for metrics. It must not
// block.
type Observer interface {
	// JobDeadLettered: a fail or the reaper dead-lettered a job.
	JobDeadLettered()
	// ReaperPass: one reaper pass ended, with what it did.
	ReaperPass(ReaperCounts)
}

type nopObserver struct{}

func (nopObserver) JobDeadLettered()        {}
func (nopObserver) ReaperPass(ReaperCounts) {}

// DefaultBackoff doubles from 5 s per failed attempt, capped at 5 minutes.
func DefaultBackoff(attempt int) time.Duration {
	d := 5 * time.Second
	for i := 1; i < attempt && d < 5*time.Minute; i++ {
		d *= 2
	}
	return min(d, 5*time.Minute)
}

func (c Config) withDefaults() Config {
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = DefaultLeaseTTL
	}
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = min(DefaultHeartbeatInterval, c.LeaseTTL/3)
	}
	if c.MaxWait <= 0 || c.MaxWait > MaxClaimWait {
		c.MaxWait = MaxClaimWait
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.Backoff == nil {
		c.Backoff = DefaultBackoff
	}
	if c.ReaperInterval <= 0 {
		c.ReaperInterval = DefaultReaperInterval
	}
	if c.MessageGrace <= 0 {
		c.MessageGrace = DefaultMessageGrace
	}
	if c.BatchSize <= 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.InstanceID == "" {
		host, _ := os.Hostname()
		c.InstanceID = fmt.Sprintf("%s:%d", host, os.Getpid())
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return c
}

// Hooks are the lifecycle's writes that must commit or roll back with a
// job's own transaction (an output bundle, a WORKORDER claim's renewal).
// An error rolls the job's write back and fails the request. Embed
// NopHooks to implement only some.
type Hooks interface {
	// OnStart runs when a claim starts an attempt.
	OnStart(ctx context.Context, q store.Querier, s *store.StartedJobAttempt) error
	// OnRenew runs when a heartbeat extends the lease.
	OnRenew(ctx context.Context, q store.Querier, j *domain.Job, l *domain.JobLease) error
	// OnSucceed runs when a complete settles the job; j.Result is set.
	OnSucceed(ctx context.Context, q store.Querier, j *domain.Job) error
	// OnDeadLetter runs when a fail or the reaper dead-letters the job.
	OnDeadLetter(ctx context.Context, q store.Querier, j *domain.Job) error
}

// NopHooks does nothing in every hook.
type NopHooks struct{}

// OnStart does nothing.
func (NopHooks) OnStart(context.Context, store.Querier, *store.StartedJobAttempt) error { return nil }

// OnRenew does nothing.
func (NopHooks) OnRenew(context.Context, store.Querier, *domain.Job, *domain.JobLease) error {
	return nil
}

// OnSucceed does nothing.
func (NopHooks) OnSucceed(context.Context, store.Querier, *domain.Job) error { return nil }

// OnDeadLetter does nothing.
func (NopHooks) OnDeadLetter(context.Context, store.Querier, *domain.Job) error { return nil }

// nopActivities stands in when the service reports to no Temporal.
type nopActivities struct{}

func (nopActivities) Heartbeat(context.Context, domain.ActivityRef) error { return nil }
func (nopActivities) Complete(context.Context, *domain.Job) error         { return nil }
func (nopActivities) Fail(context.Context, *domain.Job) error             { return nil }

// Service is the control plane: the four operations (docs/protocol/control-plane.md) over the store
// (the truth) and a Transport (the messages). Its methods are what the
// HTTP handlers call; they are safe for concurrent use.
type Service struct {
	st    Store
	tr    Transport
	acts  Activities
	hooks Hooks
	cfg   Config
	log   *slog.Logger
	// observer is cfg.Observer, or one that tells no one.
	observer Observer
}

// New returns a Service. acts and hooks may be nil: then no activity is
// reported to and no lifecycle write joins the job's transactions.
func New(st Store, tr Transport, acts Activities, hooks Hooks, cfg Config) *Service {
	if acts == nil {
		acts = nopActivities{}
	}
	if hooks == nil {
		hooks = NopHooks{}
	}
	cfg = cfg.withDefaults()
	hooks = slotHooks{Hooks: hooks, ttl: cfg.slotTTL()}
	obs := cfg.Observer
	if obs == nil {
		obs = nopObserver{}
	}
	return &Service{st: st, tr: tr, acts: acts, hooks: hooks, cfg: cfg, log: cfg.Log, observer: obs}
}

// Config returns the service's configuration with its defaults filled in.
func (s *Service) Config() Config { return s.cfg }

func (s *Service) now() time.Time { return s.cfg.Now().UTC() }

// EnqueueParams describes a job to enqueue.
type EnqueueParams struct {
	JobType string
	Stream  string
	// Payload is what the worker gets; never put secrets or anything
	// Temporal-side in it.
	Payload     json.RawMessage
	WorkOrderID string
	// Candidate, when set, makes the job that candidate of the
	// workorder's best-of-N run: Payload is then its CandidatePayload.
	Candidate int
	// Activity is the pending Temporal activity the job completes, if any.
	Activity *domain.ActivityRef
	// MaxAttempts zero means Config.MaxAttempts.
	MaxAttempts int
	// RunSlots are the run slots the enqueuing run holds, handed to the
	// job: the service holds them for it until it is settled (slotHooks).
	RunSlots []domain.SlotRef
}
