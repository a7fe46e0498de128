// Package devserver runs a single-node Temporal server and its Web UI inside
// the calling process, persisted in SQLite (a file, or memory when ephemeral).
// It is for development and tests, not production.
//
// Restarts: Start may be called again after Stop in the same process, also on
// the same database file and ports, and two servers on different ports may
// run side by side; the server library keeps no global state that prevents
// this (the tests do all three). What Stop cannot undo, because neither the
// server nor the UI exposes a way to: about thirty idle goroutines remain per
// stopped server (gRPC client connections the server and the UI never
// close), and the SQLite plugin keeps one connection per database open for
// the life of the process, so an ephemeral database stays in memory until
// the process exits.
package devserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/server/temporal"
)

// UIDisabled as Options.UIPort runs the server without the Web UI.
const UIDisabled = -1

// Options configure Start. Zero values take the documented defaults.
type Options struct {
	// Host is the IP address all listeners bind to; default "127.0.0.1".
	Host string
	// GRPCPort is the frontend port clients dial; default 7233.
	GRPCPort int
	// UIPort serves the Web UI; default 8233, UIDisabled for none.
	UIPort int
	// DBPath is the SQLite file; its directory is created when missing.
	DBPath string
	// Ephemeral keeps everything in memory; DBPath is then ignored.
	Ephemeral bool
	// Namespace is created at start when missing; default "default".
	Namespace string
	// Retention applies to a namespace created by Start; default 72h.
	Retention time.Duration
	// SearchAttributes are registered in Namespace at start when missing,
	// before the server answers any call.
	SearchAttributes map[string]enums.IndexedValueType
	// Logger receives the server's logs; default slog.Default().
	Logger *slog.Logger
	// LogLevel is the least severe server log passed on; default warn.
	LogLevel slog.Leveler
	// ClusterName names the single cluster; default "active".
	ClusterName string
}

func (o Options) withDefaults() (Options, error) {
	if o.Host == "" || o.Host == "localhost" {
		o.Host = "127.0.0.1"
	}
	if net.ParseIP(o.Host) == nil {
		return o, fmt.Errorf("host %q: must be an IP address", o.Host)
	}
	if o.GRPCPort == 0 {
		o.GRPCPort = 7233
	}
	if o.UIPort == 0 {
		o.UIPort = 8233
	}
	if o.GRPCPort < 0 || o.GRPCPort > 65535 {
		return o, fmt.Errorf("gRPC port %d: out of range", o.GRPCPort)
	}
	if (o.UIPort < 0 && o.UIPort != UIDisabled) || o.UIPort > 65535 {
		return o, fmt.Errorf("UI port %d: out of range (UIDisabled is %d)", o.UIPort, UIDisabled)
	}
	if !o.Ephemeral && o.DBPath == "" {
		return o, errors.New("set DBPath, or Ephemeral for an in-memory database")
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if o.Retention == 0 {
		o.Retention = 72 * time.Hour
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.LogLevel == nil {
		o.LogLevel = slog.LevelWarn
	}
	if o.ClusterName == "" {
		o.ClusterName = "active"
	}
	return o, nil
}

// Server is a running dev server. Stop it when done.
type Server struct {
	frontend  string
	namespace string
	temporal  temporal.Server
	ui        *webUI // nil without UI
	logLevel  *stopLevel

	stopOnce sync.Once
	stopErr  error
}

// Start runs the server and, unless disabled, the Web UI. The namespace and
// its search attributes are in place before the frontend answers at all, and
// Start returns once the frontend serves them: a workflow start in the
// namespace that sets the search attributes is then accepted. ctx bounds
// that wait.
func Start(ctx context.Context, o Options) (*Server, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("devserver options: %w", err)
	}
	if err := checkPortFree("frontend gRPC", o.Host, o.GRPCPort); err != nil {
		return nil, err
	}
	if o.UIPort != UIDisabled {
		if err := checkPortFree("web UI", o.Host, o.UIPort); err != nil {
			return nil, err
		}
	}

	level := &stopLevel{configured: o.LogLevel}
	logger := slog.New(minLevelHandler{Handler: o.Logger.Handler(), min: level})
	opts, err := serverOptions(ctx, o, serverLogger{l: logger})
	if err != nil {
		return nil, fmt.Errorf("configure temporal server: %w", err)
	}
	ts, err := temporal.NewServer(opts...)
	if err != nil {
		return nil, fmt.Errorf("create temporal server: %w", err)
	}
	if err := ts.Start(); err != nil {
		// The services that did start keep running: the server offers no
		// way to stop them once its Start has failed. The port checks above
		// make this rare.
		return nil, fmt.Errorf("start temporal server: %w", err)
	}
	s := &Server{
		frontend:  net.JoinHostPort(o.Host, strconv.Itoa(o.GRPCPort)),
		namespace: o.Namespace,
		temporal:  ts,
		logLevel:  level,
	}
	if err := waitUntilUsable(ctx, s.frontend, o.Namespace, o.SearchAttributes); err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	if o.UIPort != UIDisabled {
		if s.ui, err = startUI(ctx, o); err != nil {
			return nil, errors.Join(err, s.Stop())
		}
	}
	return s, nil
}

// FrontendAddress is the "host:port" clients dial.
func (s *Server) FrontendAddress() string { return s.frontend }

// UIURL opens the namespace's workflow list in the Web UI; "" without UI.
func (s *Server) UIURL() string {
	if s.ui == nil {
		return ""
	}
	return s.ui.namespaceURL(s.namespace)
}

// Stop shuts down the Web UI, then the server, whose logs it silences first.
// Later calls return the first call's result.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		s.logLevel.mute()
		if s.ui != nil {
			s.ui.stop()
		}
		if err := s.temporal.Stop(); err != nil {
			s.stopErr = fmt.Errorf("stop temporal server: %w", err)
		}
	})
	return s.stopErr
}
