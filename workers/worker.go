package workers

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/diazotroph/manifest"
	"github.com/azolla/azolla/internal/executor/diazotroph/patch"
	"github.com/azolla/azolla/internal/executor/diazotroph/triage"
	"github.com/azolla/azolla/internal/executor/patchgen"
	"github.com/azolla/azolla/internal/executor/sandbox"
	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/internal/lifecycle/slots"
	"github.com/azolla/azolla/internal/ops/metrics"
	"github.com/azolla/azolla/internal/remote/controlplane"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/substrate"
	"github.com/azolla/azolla/workflows"
)

// NewActivities builds the lifecycle's activities from cfg: the claim
// bridge on st and the built-in diazotrophs, their commands run by ex,
// PATCH_DIAZOTROPH also resolving repositories for the scheduler and
// running best-of-N candidates.
func NewActivities(cfg config.Config, st store.Store, identity string, ex *Executors) (*activities.Set, error) {
	reg, p, err := NewRegistry(cfg, ex)
	if err != nil {
		return nil, err
	}
	claims := activities.Claimant{Claims: claim.NewBridge(st), Identity: identity, LeaseTTL: cfg.Claim.LeaseTTL,
		Slots: NewSlots(cfg, st)}
	forges := NewForges(cfg, os.Getenv)
	return &activities.Set{
		Steps: &activities.Steps{Claimant: claims, Store: st, Diazotrophs: reg, Targets: p,
			Diazotroph: cfg.Lifecycle.Diazotroph, Budget: cfg.Lifecycle.Budget, TaskBudget: cfg.Tasks.Budget,
			Retention: cfg.Patch.Retention, Forges: forges, EarlyStop: cfg.Patch.EarlyStop,
			ParallelCandidates: cfg.Patch.ParallelCandidates, GateCommands: func(repo string) bool {
				return repo != "" && len(cfg.Patch.Repository(repo).GateCommands) > 0
			}},
		Tracks: &activities.Tracks{Claimant: claims, Store: st, Tasks: activities.TaskOptions{
			TriageMaxCaptures: cfg.Tasks.TriageMaxCaptures, TriageMaxBytes: cfg.Tasks.TriageMaxBytes,
			Budget: cfg.Tasks.Budget, SLA: cfg.Deadlines.SLA.Map(), TriageMaxFailures: cfg.Tasks.Triage.MaxFailures}},
		PullRequests: &activities.PullRequests{Store: st, Forges: forges},
		Candidates: &activities.Candidates{Claimant: claims, Store: st, Runner: p,
			EarlyStopMaxDiffLines: cfg.Patch.EarlyStopMaxDiffLines},
		RunSlots: &activities.RunSlots{Store: st, Slots: claims.Slots},
	}, nil
}

// NewSlots is the run slots of cfg's limits (lifecycle.max_concurrent_runs
// and each repository's max_concurrent_runs) over st's claims; nil when
// none is set.
func NewSlots(cfg config.Config, st store.Store) *slots.Slots {
	l := RunLimits(cfg)
	if !l.Any() {
		return nil
	}
	return slots.New(claim.NewBridge(st), st, l, cfg.Claim.LeaseTTL, nil)
}

// RunLimits are cfg's limits: lifecycle.max_concurrent_runs and each
// repository's max_concurrent_runs.
func RunLimits(cfg config.Config) slots.Limits {
	l := slots.Limits{Deployment: cfg.Lifecycle.MaxConcurrentRuns, Repositories: map[string]int{}}
	for _, r := range cfg.Patch.Repositories {
		l.Repositories[r.Repository] = r.MaxConcurrentRuns
	}
	return l
}

// SlotQueues reads the run slot queues of st, whatever limits this
// process was given: the workers' limits put the runs there. cfg's limits
// only name how many slots each has (0 when unknown here).
func SlotQueues(cfg config.Config, st store.Store) *slots.Slots {
	return slots.New(nil, st, RunLimits(cfg), cfg.Claim.LeaseTTL, nil)
}

// observe has every activity of set take its claims through claims (a
// bridge that counts them) and tell o what it wrote.
func observe(set *activities.Set, claims *claim.Bridge, o activities.Observer) {
	set.Steps.Claims, set.Tracks.Claims, set.Candidates.Claims = claims, claims, claims
	set.Steps.Observer, set.Tracks.Observer, set.PullRequests.Observer, set.Candidates.Observer = o, o, o, o
}

// SubstrateConfig is the substrate the manifest reads (tasks.substrate):
// this azolla's own store by default, else a configured substrates.<name>.
func SubstrateConfig(cfg config.Config) substrate.Config {
	sc := substrate.Config{Name: cfg.Tasks.Substrate, StatementTimeout: cfg.Tasks.StatementTimeout,
		RowCap: cfg.Tasks.RowCap, SLA: cfg.Deadlines.SLA.Map()}
	if s, ok := cfg.Substrates[cfg.Tasks.Substrate]; ok {
		sc.Driver, sc.DSN, sc.Path = s.Driver, s.DSN, s.SQLitePath
		return sc
	}
	sc.Driver, sc.DSN, sc.Path = cfg.Store.Driver, cfg.Store.DSN, cfg.SQLitePath()
	return sc
}

// NewRegistry builds the built-in diazotrophs from cfg alone (no store, so
// a remote worker runs the same ones): PATCH_DIAZOTROPH, also returned for
// the repository resolution it offers the scheduler, and
// COMMAND_DIAZOTROPH, TRIAGE_DIAZOTROPH and MANIFEST_DIAZOTROPH. Their
// commands run by ex, and what they return is redacted of ex.Secrets.
func NewRegistry(cfg config.Config, ex *Executors) (*diazotroph.Registry, *patch.Patch, error) {
	p, err := NewPatch(cfg, ex)
	if err != nil {
		return nil, nil, err
	}
	tr, err := newTriage(cfg, ex)
	if err != nil {
		return nil, nil, err
	}
	ds := []diazotroph.Diazotroph{p, diazotroph.NewCommand(diazotroph.CommandOptions{
		Run: cfg.Diazotroph.Command.Run, Dir: cfg.CommandDir(), Executor: ex.Command}),
		tr, manifest.Diazotroph{}}
	reg := diazotroph.NewRegistry()
	for _, d := range ds {
		reg.Register(diazotroph.Redacted(d, ex.Secrets))
	}
	return reg, p, nil
}

// newTriage builds TRIAGE_DIAZOTROPH on cfg.Tasks.Triage's route: the
// command route runs with the patch command's executor (no secret of
// azolla's reaches it), the openai route asks patch.openai's endpoint.
func newTriage(cfg config.Config, ex *Executors) (triage.Diazotroph, error) {
	tc := cfg.Tasks.Triage
	o := triage.Options{MaxFailures: tc.MaxFailures}
	switch tc.Generator {
	case config.TriageCommand:
		o.Model = triage.NewCommand(tc.Command.Run, ex.PatchCommand)
	case config.TriageOpenAI:
		client, err := patchgen.NewOpenAI(openAIOptions(cfg.Patch.OpenAI, cfg.TriageModel()))
		if err != nil {
			return triage.Diazotroph{}, fmt.Errorf("tasks.triage.openai: %w", err)
		}
		o.Model = triage.NewOpenAI(client)
	}
	return triage.New(o), nil
}

// WorkflowCacheSize bounds the lifecycles a worker process keeps in memory
// between their workflow tasks (the SDK's sticky cache, 10,000 by default).
// A lifecycle waiting for a human costs nothing while it waits except its
// place in the cache: five parked goroutines and about 30 KiB of heap,
// which the Go runtime's forced collection, every two minutes, marks in
// full even in an otherwise idle process. A lifecycle evicted from the
// cache replays its history on its next workflow task, a few milliseconds
// for one of about 40 events, which add up when many run at once. Measured
// on two cores: with 1,000 lifecycles running at once, a cache of 1,024
// took them to DONE about 14% faster than one of 256 (BenchmarkScale, three
// paired runs), and one of 4,000 no faster than 1,000; with 10,000 waiting,
// an idle `azolla dev` used 0.86% of a core with 1,024 against 0.72% with
// 256 (make bench-idle).
const WorkflowCacheSize = 1024

// Register puts ObjectiveWorkflow, TrackWorkflow and every lifecycle
// activity on w (the lifecycle task queue): each struct's exported
// methods, under their method names.
func Register(w worker.Registry, set *activities.Set) {
	w.RegisterWorkflowWithOptions(workflows.ObjectiveWorkflow, workflow.RegisterOptions{Name: workflows.ObjectiveWorkflowName})
	w.RegisterWorkflowWithOptions(workflows.TrackWorkflow, workflow.RegisterOptions{Name: workflows.TrackWorkflowName})
	w.RegisterActivity(set.Steps)
	w.RegisterActivity(set.Tracks)
	w.RegisterActivity(set.PullRequests)
	w.RegisterActivity(set.Candidates)
	w.RegisterActivity(set.RunSlots)
}

// RegisterRuns puts the lifecycle's heavy steps on w (the run task
// queue, workflows.RunTaskQueue): Run, RunCandidate and Gate, under the
// names Register gives them.
func RegisterRuns(w worker.Registry, set *activities.Set) {
	w.RegisterActivityWithOptions(set.Steps.Run, activity.RegisterOptions{Name: "Run"})
	w.RegisterActivityWithOptions(set.Steps.Gate, activity.RegisterOptions{Name: "Gate"})
	w.RegisterActivityWithOptions(set.Candidates.RunCandidate, activity.RegisterOptions{Name: "RunCandidate"})
}

// RegisterDeadlines puts DeadlineMonitorWorkflow and its scan on w (the
// deadlines task queue): the monitor takes no slot of the lifecycle's.
func RegisterDeadlines(w worker.Registry, set *activities.Set) {
	w.RegisterWorkflowWithOptions(workflows.DeadlineMonitorWorkflow,
		workflow.RegisterOptions{Name: workflows.DeadlineMonitorWorkflowName})
	w.RegisterActivityWithOptions(set.Tracks.ScanDeadlines, activity.RegisterOptions{Name: "ScanDeadlines"})
}

// Options shape a worker process.
type Options struct {
	Config config.Config
	Client client.Client
	Store  store.Store
	Log    *slog.Logger
	// Identity names the worker in Temporal and in claim owner ids.
	Identity string
	// NoPoller leaves the poller out of this process. Any number of
	// processes may run one: only one per store is active at a time.
	NoPoller bool
	// ControlPlane enqueues the jobs of control_plane.remote_diazotrophs.
	// Nil: Run opens the configured transport itself when any diazotroph
	// is routed to remote workers.
	ControlPlane *controlplane.Service
	// Metrics, when set, counts claims, executed workorders and gate
	// verdicts.
	Metrics *metrics.Metrics
	// OnStarted, when set, is called once the workers poll.
	OnStarted func()
	// OnStopping, when set, is called when ctx is done, before the workers
	// stop.
	OnStopping func()
	// Sandbox confines the runs of executors. Nil: Run builds one from
	// Config (NewSandbox) and closes it when it returns.
	Sandbox *sandbox.Host
	// IntakeWakeup, when set, is given the forge intake this process runs
	// (with its poller, when a repository takes issues), for the forge
	// webhook to wake.
	IntakeWakeup *IntakeWakeup
}

// Run runs a lifecycle worker, the workspace retention pass over this
// machine's git dir, and the poller unless o.NoPoller, until ctx is done;
// then it stops them all, letting running activities end.
func Run(ctx context.Context, o Options) error {
	if o.Sandbox == nil {
		h, err := NewSandbox(o.Config, o.Log)
		if err != nil {
			return err
		}
		defer h.Close()
		o.Sandbox = h
	}
	if o.Metrics != nil {
		o.Sandbox.ObserveEgress(o.Metrics.Egress)
	}
	ex, err := NewExecutors(o.Config, o.Sandbox, o.Log)
	if err != nil {
		return err
	}
	set, err := NewActivities(o.Config, o.Store, o.Identity, ex)
	if err != nil {
		return err
	}
	if o.Metrics != nil {
		observe(set, claim.NewBridge(o.Store, claim.WithObserver(o.Metrics)), o.Metrics)
	}
	if remote := o.Config.ControlPlane.RemoteDiazotrophs; len(remote) > 0 {
		cp := o.ControlPlane
		if cp == nil {
			tr, err := OpenTransport(ctx, o.Config.ControlPlane, o.Store)
			if err != nil {
				return err
			}
			defer tr.Close()
			// Enqueue only: the control plane process reports to Temporal.
			cp = NewObservedControlPlane(o.Config, o.Store, tr, nil, o.Log, o.Identity, o.Metrics)
		}
		r := &activities.Remote{Enqueuer: cp, Diazotrophs: remote, MaxAttempts: o.Config.ControlPlane.MaxAttempts}
		set.Steps.Remote, set.Candidates.Remote = r, r
		o.Log.Info("remote diazotrophs run through the control plane", "diazotrophs", remote)
	}
	// Workspaces are local to the machine whose runner made them, so every
	// worker prunes its own.
	pruner, err := NewPruner(o.Config, o.Store, o.Log)
	if err != nil {
		return err
	}
	// Process-wide, and read when the first worker of the process starts
	// (azolla dev sets it before its server's own workers start).
	worker.SetStickyWorkflowCacheSize(WorkflowCacheSize)
	w := worker.New(o.Client, o.Config.Temporal.TaskQueue, worker.Options{
		Identity:          o.Identity,
		WorkerStopTimeout: o.Config.Claim.LeaseTTL,
	})
	sub, err := substrate.Open(ctx, SubstrateConfig(o.Config))
	if err != nil {
		return err
	}
	defer sub.Close()
	set.Tracks.Tasks.Substrate = sub
	Register(w, set)
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker on task queue %s: %w", o.Config.Temporal.TaskQueue, err)
	}
	defer w.Stop()
	// The heavy steps have a queue of their own, and at most
	// worker.max_runs of them run here at once.
	runQueue := workflows.RunTaskQueue(o.Config.Temporal.TaskQueue)
	rw := worker.New(o.Client, runQueue, worker.Options{
		Identity:                           o.Identity,
		WorkerStopTimeout:                  o.Config.Claim.LeaseTTL,
		DisableWorkflowWorker:              true,
		MaxConcurrentActivityExecutionSize: o.Config.Worker.Runs(),
	})
	RegisterRuns(rw, set)
	if err := rw.Start(); err != nil {
		return fmt.Errorf("start worker on task queue %s: %w", runQueue, err)
	}
	defer rw.Stop()
	o.Log.Info("runs on their own task queue", "task_queue", runQueue, "max_runs", o.Config.Worker.Runs())
	dw := worker.New(o.Client, o.Config.Deadlines.TaskQueue, worker.Options{Identity: o.Identity,
		WorkerStopTimeout: o.Config.Claim.LeaseTTL})
	RegisterDeadlines(dw, set)
	if err := dw.Start(); err != nil {
		return fmt.Errorf("start worker on task queue %s: %w", o.Config.Deadlines.TaskQueue, err)
	}
	defer dw.Stop()
	if what, err := ApplyDeadlineSchedule(ctx, o.Client, o.Config); err != nil {
		// The monitor is not the lifecycle's: a worker runs without it,
		// and `azolla schedules apply` sets it up later.
		o.Log.Warn("the deadline monitor's schedule could not be applied; run `azolla schedules apply`", "error", err)
	} else {
		o.Log.Info("deadline monitor schedule "+what, "schedule_id", workflows.DeadlineScheduleID,
			"interval", o.Config.Deadlines.Interval.String(), "task_queue", o.Config.Deadlines.TaskQueue)
	}
	pruner.Start(ctx)
	defer pruner.Stop()
	// The store's finished work is pruned by every worker: a row one pass
	// deleted is not there for the next (store.retention).
	storePruner := NewStorePruner(o.Config, o.Store, o.Log)
	storePruner.Start(ctx)
	defer storePruner.Stop()

	if !o.NoPoller {
		p := newPoller(o, set.Steps.Claims)
		p.Start(ctx)
		defer p.Stop()
		in, err := newIntake(o, set.Steps.Claims)
		if err != nil {
			return err
		}
		if in != nil {
			in.Start(ctx)
			defer in.Stop()
			o.IntakeWakeup.set(in)
			defer o.IntakeWakeup.set(nil)
			o.Log.Info("forge intake running", "repositories", len(in.Repositories))
		}
	}
	if o.OnStarted != nil {
		o.OnStarted()
	}
	<-ctx.Done()
	// The deferred stops run next: the poller gives its claim up, the
	// workers stop polling and wait up to WorkerStopTimeout (claim.lease_ttl)
	// for running activities; those still running then are cancelled and
	// retried by Temporal elsewhere, their claims lapsing within the TTL.
	if o.OnStopping != nil {
		o.OnStopping()
	}
	o.Log.Info("worker stopping: running activities have claim.lease_ttl to finish", "grace", o.Config.Claim.LeaseTTL.String())
	return nil
}
