package workers

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/executor/redact"
	"github.com/azolla/azolla/internal/executor/sandbox"
)

// NewSandbox builds this process's executor boundary from cfg.Executor:
// the sandbox mode (logging which was chosen), the limits, and the paths no
// run may see, cfg's state and key files plus hide (the configuration file
// read, a remote worker's token file). Close it when the process stops.
func NewSandbox(cfg config.Config, log *slog.Logger, hide ...string) (*sandbox.Host, error) {
	h, err := sandbox.New(sandbox.Options{Mode: sandbox.Mode(cfg.Executor.Sandbox), Bwrap: cfg.Executor.Bwrap,
		Limits: cfg.Executor.Limits(), Hide: append(cfg.HiddenPaths(), hide...), RunsDir: cfg.RunsDir(), Log: log})
	if err != nil {
		return nil, fmt.Errorf("executor.sandbox %s: %w", cfg.Executor.Sandbox, err)
	}
	return h, nil
}

// Executors are the runners of one process's configured executors, and
// every secret value that must stay out of what they produce.
type Executors struct {
	// Command runs COMMAND_DIAZOTROPH's command, PatchCommand the command
	// generator's agent; both carry executor.stall_timeout.
	Command, PatchCommand *sandbox.Executor
	// Gates run each configured repository's gate commands, by
	// repository; DefaultGate those of any other.
	Gates       map[string]*sandbox.Executor
	DefaultGate *sandbox.Executor
	// Setups run each configured repository's setup, by repository;
	// DefaultSetup that of any other.
	Setups       map[string]*sandbox.Executor
	DefaultSetup *sandbox.Executor
	// Secrets redacts cfg's secrets, the worker's secret variables, what
	// the executors pass to their runs, and any extra secret.
	Secrets *redact.Redactor
	// Environ is the worker's environment the runs are built from.
	Environ []string
}

// NewExecutors builds the executors of cfg on h. extra are further values
// to redact (a remote worker's token).
func NewExecutors(cfg config.Config, h *sandbox.Host, log *slog.Logger, extra ...redact.Secret) (*Executors, error) {
	if h == nil {
		return nil, fmt.Errorf("executor: no sandbox host")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e := &Executors{Gates: map[string]*sandbox.Executor{}, Setups: map[string]*sandbox.Executor{}, Environ: h.Environ()}
	// A forge token is read from the environment or its file; it is
	// redacted like the secrets written in the configuration.
	secrets := append(append(cfg.Secrets(), cfg.ForgeTokens(os.Getenv)...), extra...)
	reds := []*redact.Redactor{redact.New(secrets...), h.Secrets()}
	build := func(p sandbox.Policy) (*sandbox.Executor, error) {
		x, err := h.Executor(p, log)
		if err != nil {
			return nil, fmt.Errorf("executor: %w", err)
		}
		reds = append(reds, x.Secrets())
		return x, nil
	}
	var err error
	if e.Command, err = build(cfg.CommandPolicy()); err != nil {
		return nil, err
	}
	if e.PatchCommand, err = build(cfg.PatchCommandPolicy()); err != nil {
		return nil, err
	}
	// The work's own runs are stopped when they stall; gate commands are
	// not: a test suite may rightly be silent for long, and the gate's
	// budget bounds it.
	stall := cfg.Executor.StallTimeout
	e.Command, e.PatchCommand = e.Command.WithStallTimeout(stall), e.PatchCommand.WithStallTimeout(stall)
	if e.DefaultGate, err = build(config.DefaultGatePolicy()); err != nil {
		return nil, err
	}
	if e.DefaultSetup, err = build(config.DefaultSetupPolicy()); err != nil {
		return nil, err
	}
	for i, r := range cfg.Patch.Repositories {
		x, err := build(cfg.GatePolicy(i))
		if err != nil {
			return nil, err
		}
		e.Gates[r.Repository] = x
		if e.Setups[r.Repository], err = build(cfg.SetupPolicy(i)); err != nil {
			return nil, err
		}
	}
	e.Secrets = redact.Join(reds...)
	if short := redact.New(cfg.Secrets()...).TooShort(); len(short) > 0 {
		log.Warn("secrets shorter than the redaction minimum are not redacted from records; use longer ones",
			"keys", short, "minimum", redact.MinLength)
	}
	return e, nil
}

// Setup is the executor of repo's setup.
func (e *Executors) Setup(repo string) *sandbox.Executor {
	if x, ok := e.Setups[repo]; ok {
		return x
	}
	return e.DefaultSetup
}

// Gate is the executor of repo's gate commands.
func (e *Executors) Gate(repo string) *sandbox.Executor {
	if x, ok := e.Gates[repo]; ok {
		return x
	}
	return e.DefaultGate
}
