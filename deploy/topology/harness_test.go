package topology

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/azolla/azolla/internal/executor/proc/proctest"
	"github.com/azolla/azolla/internal/store/storetest"
)

// enabled skips the test unless AZOLLA_TEST_TOPOLOGY=1: each run builds
// the Temporal server and azolla and starts half a dozen processes.
func enabled(t testing.TB) {
	t.Helper()
	if os.Getenv("AZOLLA_TEST_TOPOLOGY") != "1" {
		t.Skip("the topology proof runs with AZOLLA_TEST_TOPOLOGY=1 (make test-topology)")
	}
}

// binaries are the Temporal server and the lean azolla, built once per run.
var binaries struct {
	once     sync.Once
	err      error
	dir      string
	server   string
	azolla   string
	duration time.Duration
}

// build builds ./temporalserver and the lean azolla (every command but dev).
func build(t testing.TB) (server, azolla string) {
	t.Helper()
	b := &binaries
	b.once.Do(func() {
		start := time.Now()
		b.dir, b.err = os.MkdirTemp("", "azolla-topology-")
		if b.err != nil {
			return
		}
		b.server, b.azolla = filepath.Join(b.dir, "temporalserver"), filepath.Join(b.dir, "azolla")
		for bin, pkg := range map[string]string{b.server: "github.com/azolla/azolla/deploy/topology/temporalserver",
			b.azolla: "github.com/azolla/azolla/cmd/azolla"} {
			out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput()
			if err != nil {
				b.err = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
				return
			}
		}
		b.duration = time.Since(start)
	})
	require.NoError(t, b.err)
	return b.server, b.azolla
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binaries.dir != "" {
		_ = os.RemoveAll(binaries.dir)
	}
	os.Exit(code)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// postgres is the test's PostgreSQL server: its admin connection and
// address.
type postgres struct {
	admin      *sql.DB
	host, port string
}

// openPostgres connects to the test's PostgreSQL as its administrator
// (storetest's DSN: CI=true fails when it is down, elsewhere it skips).
func openPostgres(t testing.TB) *postgres {
	t.Helper()
	dsn := storetest.PostgresDSN(t)
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	return &postgres{admin: db, host: u.Hostname(), port: port}
}

// commitDelayEnv names microseconds every commit in the topology's
// databases waits before its WAL flush (PostgreSQL's commit_delay with
// commit_siblings 0): the benchmarks' model of a machine with slow disk
// flushes, where a single-row commit takes milliseconds (pgbench). Unset:
// the machine's own.
const commitDelayEnv = "AZOLLA_BENCH_COMMIT_DELAY_US"

// createDatabases does what deploy/compose/postgres-init.sh does on an
// empty volume, on fresh names: the roles temporal and azolla (kept when
// they exist; the test's server trusts local connections, so they have no
// password) and, for each of the compose file's database names, a fresh
// database owned by its role. It returns compose name → fresh name; the
// databases are dropped when the test ends, after every process has
// stopped.
func (pg *postgres) createDatabases(t testing.TB) map[string]string {
	t.Helper()
	ctx := context.Background()
	for _, role := range []string{"temporal", "azolla"} {
		_, err := pg.admin.ExecContext(ctx, fmt.Sprintf(`DO $$BEGIN CREATE ROLE %s LOGIN;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END$$`, role))
		require.NoError(t, err, "create role %s", role)
	}
	suffix := randomHex(4)
	names := map[string]string{}
	for db, owner := range map[string]string{"temporal": "temporal", "temporal_visibility": "temporal", "azolla": "azolla"} {
		fresh := db + "_" + suffix
		_, err := pg.admin.ExecContext(ctx, fmt.Sprintf(`CREATE DATABASE %s OWNER %s`, fresh, owner))
		require.NoError(t, err, "create database %s", fresh)
		if us := os.Getenv(commitDelayEnv); us != "" {
			// Every commit of every session waits that long before its
			// WAL flush: a disk whose flushes are that slow.
			delay, err := strconv.Atoi(us)
			require.NoError(t, err, "%s=%q: microseconds", commitDelayEnv, us)
			for _, set := range []string{fmt.Sprintf("commit_delay = %d", delay), "commit_siblings = 0"} {
				_, err := pg.admin.ExecContext(ctx, fmt.Sprintf(`ALTER DATABASE %s SET %s`, fresh, set))
				require.NoError(t, err, "alter database %s set %s", fresh, set)
			}
		}
		names[db] = fresh
		t.Cleanup(func() {
			if _, err := pg.admin.ExecContext(context.Background(), `DROP DATABASE IF EXISTS `+fresh+` WITH (FORCE)`); err != nil {
				t.Errorf("drop database %s: %v", fresh, err)
			}
		})
	}
	return names
}

// proc is one process of the topology, restartable with the same command.
type proc struct {
	name string
	bin  string
	args []string
	env  []string
	cmd  *exec.Cmd
	out  *proctest.Buffer
	done chan struct{}
}

// startProc starts bin args with exactly env and stops it (SIGTERM, then
// SIGKILL after 20 s) when the test ends, logging its output when the test
// failed.
func startProc(t testing.TB, name, bin string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, bin: bin, args: args, env: env, out: &proctest.Buffer{}}
	p.start(t)
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("--- %s output:\n%s", p.name, p.out.String())
		}
	})
	return p
}

func (p *proc) start(t testing.TB) {
	t.Helper()
	p.cmd = exec.Command(p.bin, p.args...)
	p.cmd.Env = p.env
	fmt.Fprintf(p.out, "=== start %s %s\n", filepath.Base(p.bin), strings.Join(p.args, " "))
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	require.NoError(t, p.cmd.Start(), "start %s", p.name)
	p.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) {
		_ = cmd.Wait()
		close(done)
	}(p.cmd, p.done)
}

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// kill sends SIGKILL and waits for the process to end.
func (p *proc) kill(t testing.TB) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL), "kill %s", p.name)
	<-p.done
	fmt.Fprintf(p.out, "=== SIGKILLed\n")
}

func (p *proc) stop() {
	if p.cmd == nil || p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// run runs bin args with env to completion and returns its stdout.
func run(t testing.TB, bin string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s %s: %s%s", filepath.Base(bin), strings.Join(args, " "), out, stderr.String())
	return string(out)
}

// waitHealthy dials the Temporal frontend with opts until its CheckHealth
// answers, or the server process ends, or a minute has passed.
func waitHealthy(t testing.TB, opts client.Options, server *proc) client.Client {
	t.Helper()
	opts.Logger = quietSDKLogger{}
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, err := client.DialContext(ctx, opts)
		if err == nil {
			_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
			if err == nil {
				cancel()
				t.Cleanup(c.Close)
				return c
			}
			c.Close()
		}
		cancel()
		if server.exited() {
			t.Fatalf("the Temporal server exited:\n%s", server.out.String())
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Temporal server at %s did not answer CheckHealth: %v", opts.HostPort, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// quietSDKLogger drops the SDK's logs.
type quietSDKLogger struct{}

func (quietSDKLogger) Debug(string, ...any) {}
func (quietSDKLogger) Info(string, ...any)  {}
func (quietSDKLogger) Warn(string, ...any)  {}
func (quietSDKLogger) Error(string, ...any) {}

var _ sdklog.Logger = quietSDKLogger{}
