package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/budget"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/dial"
	"github.com/azolla/azolla/internal/textsafe"
	"github.com/azolla/azolla/starter"
)

// session is what a client command works with: config, store and, when
// asked for, a Temporal client.
type session struct {
	cfg     config.Config
	log     *slog.Logger
	store   store.Store
	client  client.Client
	starter *starter.Starter
}

// openSession loads config and opens the (migrated) store, and dials
// Temporal when withTemporal.
func (a *app) openSession(cmd *cobra.Command, withTemporal bool) (*session, error) {
	cfg, err := a.loadConfig(cmd.Flags())
	if err != nil {
		return nil, err
	}
	return a.sessionFor(cmd, cfg, withTemporal)
}

// sessionFor is openSession with the configuration given.
func (a *app) sessionFor(cmd *cobra.Command, cfg config.Config, withTemporal bool) (*session, error) {
	var err error
	s := &session{cfg: cfg, log: cfg.Logger(a.stderr)}
	ctx := cmd.Context()
	s.store, err = dial.Open(ctx, dial.Config{Driver: cfg.Store.Driver, DSN: cfg.Store.DSN, SQLitePath: cfg.SQLitePath()})
	if err != nil {
		return nil, err
	}
	if _, err := s.store.Migrate(ctx); err != nil {
		s.close()
		return nil, fmt.Errorf("%s store: %w", cfg.Store.Driver, err)
	}
	if a.wrapStore != nil {
		s.store = a.wrapStore(s.store)
	}
	s.starter = &starter.Starter{Store: s.store, TaskQueue: cfg.Temporal.TaskQueue}
	if withTemporal {
		if err := a.dialTemporal(cmd, s); err != nil {
			s.close()
			return nil, err
		}
	}
	return s, nil
}

// openProcess opens the session of a long-running process (worker,
// control plane): its Temporal client, and every worker built on it, logs
// through the session's own logger. An empty identity becomes pid@host.
func (a *app) openProcess(cmd *cobra.Command, identity string) (*session, string, error) {
	s, err := a.openSession(cmd, false)
	if err != nil {
		return nil, "", err
	}
	if err := a.dialTemporalLogging(cmd, s, s.log); err != nil {
		s.close()
		return nil, "", err
	}
	if identity == "" {
		identity = activities.DefaultIdentity()
	}
	return s, identity, nil
}

// openObjective opens a session on one objective: it is looked up in the
// store first, so an unknown id is told as such even while Temporal is
// down, then Temporal is dialed.
func (a *app) openObjective(cmd *cobra.Command, id string) (*session, *domain.Objective, error) {
	s, err := a.openSession(cmd, false)
	if err != nil {
		return nil, nil, err
	}
	o, err := s.store.GetObjective(cmd.Context(), id)
	if err == nil {
		err = a.dialTemporal(cmd, s)
	}
	if err != nil {
		s.close()
		return nil, nil, classify(err)
	}
	return s, o, nil
}

// preamble is what a client command does before its body, in this order:
// check --output, parse its flags and arguments, open its session. Each
// step's error is the command's, as it is.
type preamble struct {
	// output gives the command --output text|json.
	output bool
	// parse checks the flags and arguments before anything is opened,
	// keeping what the body needs; nil when there is nothing to check.
	parse func(cmd *cobra.Command, args []string) error
	// objective opens the session on the objective args[0] names (see
	// openObjective): an unknown id is told before Temporal is dialed.
	objective bool
	// temporal dials Temporal when the session opens.
	temporal bool
}

// call is what a client command's body works with: its open session,
// whether --output json was asked for, and the objective it was opened on
// (preamble.objective).
type call struct {
	*session
	json      bool
	objective *domain.Objective
}

// withSession makes cmd a client command: p's preamble, then body with the
// session open, closed when body returns. A body reads: call, print.
func (a *app) withSession(cmd *cobra.Command, p preamble, body func(cmd *cobra.Command, args []string, c *call) error) {
	jsonOut := func() (bool, error) { return false, nil }
	if p.output {
		jsonOut = outputFlag(cmd)
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		asJSON, err := jsonOut()
		if err != nil {
			return err
		}
		if p.parse != nil {
			if err := p.parse(cmd, args); err != nil {
				return err
			}
		}
		c := &call{json: asJSON}
		if p.objective {
			c.session, c.objective, err = a.openObjective(cmd, args[0])
		} else {
			c.session, err = a.openSession(cmd, p.temporal)
		}
		if err != nil {
			return err
		}
		defer c.close()
		return body(cmd, args, c)
	}
}

// dialTemporal connects a client command's session to Temporal. The SDK
// logs at info on every dial, and a command shows only problems: its SDK
// logs at warn at least, in log.format.
func (a *app) dialTemporal(cmd *cobra.Command, s *session) error {
	return a.dialTemporalLogging(cmd, s, s.cfg.LoggerAtLeast(a.stderr, slog.LevelWarn))
}

// dialTemporalLogging connects the session to Temporal with the SDK's
// client, and every worker built on it, logging to sdkLog. Long-running
// processes pass the session's own logger, so that log.level and
// log.format apply to the SDK and to workflow and activity logs.
func (a *app) dialTemporalLogging(cmd *cobra.Command, s *session, sdkLog *slog.Logger) error {
	c, err := starter.Dial(cmd.Context(), s.cfg.Temporal, sdkLog)
	if err != nil {
		return unavailableError(err)
	}
	s.client, s.starter.Client = c, c
	return nil
}

func (s *session) close() {
	if s.client != nil {
		s.client.Close()
	}
	if s.store != nil {
		_ = s.store.Close()
	}
}

// checkStatusFlag refuses a --status that is none of allowed (empty means
// no filter) as a usage error.
func checkStatusFlag(status string, allowed ...string) error {
	if status != "" && !slices.Contains(allowed, status) {
		return usageError(fmt.Errorf("--status must be one of %s, got %q", strings.Join(allowed, ", "), status))
	}
	return nil
}

// outputFlag adds --output text|json and returns a checker for it.
func outputFlag(cmd *cobra.Command) func() (bool, error) {
	var output string
	cmd.Flags().StringVarP(&output, "output", "o", "text", `output format: "text" or "json"`)
	return func() (bool, error) {
		switch output {
		case "text":
			return false, nil
		case "json":
			return true, nil
		}
		return false, usageError(fmt.Errorf(`--output must be "text" or "json", got %q`, output))
	}
}

// writeJSON writes v as indented JSON that is safe on a terminal too (see
// textsafe.JSON): stored text reaches it unchanged, for programs.
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(textsafe.JSON(buf.Bytes()))
	return err
}

// classify gives errors of the objective commands their exit status.
func classify(err error) error {
	var ee *exitError
	switch {
	case err == nil, errors.As(err, &ee):
		return err
	case errors.Is(err, domain.ErrNotFound):
		return &exitError{code: exitNotFound, err: err}
	case errors.Is(err, starter.ErrRefused), errors.Is(err, domain.ErrAlreadyExists), errors.Is(err, budget.ErrSpent):
		return &exitError{code: exitRefused, err: err}
	case errors.Is(err, starter.ErrNoLifecycle):
		return &exitError{code: exitUnavailable, err: err}
	}
	return err
}

func unavailableError(err error) error { return &exitError{code: exitUnavailable, err: err} }
