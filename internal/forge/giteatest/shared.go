package giteatest

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/azolla/azolla/internal/executor/proc/proctest"
)

// shared is the one server of a test binary: starting Gitea takes seconds,
// a repository a few milliseconds, so tests share the server and each gets
// a repository of its own.
var shared struct {
	mu  sync.Mutex
	s   *Server
	err error
	log proctest.Buffer
}

// Prepare builds Gitea when it is missing, before any test runs; the test
// binary's TestMain calls it ahead of m.Run. The minutes of a first build
// on a machine then count against go test's kill timer (the -timeout and
// a minute more) but not against the test timeout, which starts in m.Run.
// Outside CI without PostgreSQL the tests are skipped, so it builds
// nothing. A failed build fails every test that asks for the server.
func Prepare() {
	if os.Getenv("CI") != "true" && pingPostgres(context.Background(), PostgresDSN()) != nil {
		return
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if _, err := Build(context.Background(), os.Stderr); err != nil {
		shared.err = err
	}
}

// Shared returns the test binary's server, starting it (and building
// Gitea, the first time on a machine) on first use. The test binary's
// TestMain calls StopShared after m.Run. Without PostgreSQL the test fails
// under CI=true and is skipped elsewhere.
func Shared(t testing.TB) *Server {
	t.Helper()
	RequirePostgres(t)
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.s == nil && shared.err == nil {
		begin := time.Now()
		shared.s, shared.err = Start(context.Background(), Options{Log: &shared.log})
		if shared.err == nil {
			t.Logf("gitea %s serving at %s, ready %s after the call", Version, shared.s.URL,
				time.Since(begin).Round(time.Millisecond))
		}
	}
	if shared.err != nil {
		t.Fatalf("start gitea: %v\n--- gitea output (last lines):\n%s", shared.err, lastLines(shared.log.String(), 40))
	}
	return shared.s
}

// StopShared stops the shared server, if one was started, and removes its
// database and files.
func StopShared() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.s != nil {
		if err := shared.s.Close(); err != nil {
			os.Stderr.WriteString("giteatest: " + err.Error() + "\n")
		}
		shared.s = nil
	}
}

// SharedLog is what the shared server has written so far, for a failing
// test to show.
func SharedLog() string { return shared.log.String() }

// RequirePostgres fails the test under CI=true when PostgreSQL does not
// answer at PostgresDSN(), and skips it elsewhere, saying why.
func RequirePostgres(t testing.TB) {
	t.Helper()
	err := pingPostgres(context.Background(), PostgresDSN())
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("PostgreSQL is required under CI=true for the Gitea tests and is unreachable: %v", err)
	}
	t.Skipf("PostgreSQL is unreachable (%v): start it or set AZOLLA_TEST_POSTGRES_DSN to run the Gitea tests", err)
}
