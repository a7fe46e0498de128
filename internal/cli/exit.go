package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/textsafe"
)

// Exit statuses.
const (
	exitOK          = 0
	exitFailure     = 1 // the command ran and failed: invalid file, store error
	exitUsage       = 2 // the command could not run as asked: bad args, flags, config or input (usage text only for args and flags)
	exitNotFound    = 3 // an id names no objective (or record)
	exitRefused     = 4 // the objective's state does not allow it (or the id is taken)
	exitUnavailable = 5 // Temporal (or the lifecycle) cannot be reached
	exitPaused      = 6 // watch: the lifecycle paused without reaching DONE
)

// exitError carries an exit status other than exitFailure.
type exitError struct {
	code int
	// usage asks for the command's usage after the message.
	usage bool
	err   error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageError is a mistake in how the command was called.
func usageError(err error) error { return &exitError{code: exitUsage, usage: true, err: err} }

// configError is an unusable configuration; the usage text would not help.
func configError(err error) error { return &exitError{code: exitUsage, err: err} }

// inputError is input the command was called correctly with but cannot
// take: a record the schema refuses, a file that cannot be read or parsed.
// It exits like a usage error, but the usage text would not help. An error
// that already carries its exit status (a usage error) keeps it.
func inputError(err error) error {
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	return &exitError{code: exitUsage, err: err}
}

// Run executes args and returns the exit status. Errors are printed as one
// line, "azolla: <message>", on stderr.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string, opts ...Option) int {
	a := &app{stdout: stdout, stderr: stderr, getenv: getenv}
	for _, o := range opts {
		o(a)
	}
	root := a.rootCmd()
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}

	code, usage := exitFailure, false
	var ee *exitError
	switch {
	case errors.As(err, &ee):
		code, usage = ee.code, ee.usage
	case !a.started:
		// cobra refused the command line (unknown command, bad flag, wrong
		// number of args) before any of our code ran.
		code, usage = exitUsage, true
	}
	fmt.Fprintf(stderr, "azolla: %s\n", oneLine(err.Error()))
	if usage && cmd != nil {
		fmt.Fprintf(stderr, "\n%s", cmd.UsageString())
	}
	return code
}

// oneLine folds a multi-line error (errors.Join) into one line that is safe
// to print: errors quote ids, titles and git's output, and any control
// character left in them is shown escaped, not obeyed.
func oneLine(s string) string {
	return textsafe.Line(strings.ReplaceAll(strings.TrimSpace(s), "\n", "; "))
}

// Option adds what only the real binary has.
type Option func(*app)

// WithDevServer lets `azolla dev` start its embedded server.
func WithDevServer(start StartDevServer) Option { return func(a *app) { a.startDev = start } }

// WithStoreWrapper wraps every store a command opens, once migrated:
// the tests' recording build of the binary journals its store's history
// through it. nil wraps nothing.
func WithStoreWrapper(wrap func(store.Store) store.Store) Option {
	return func(a *app) { a.wrapStore = wrap }
}

// WithName is how the user invoked azolla.
func WithName(name string) Option { return func(a *app) { a.name = name } }
