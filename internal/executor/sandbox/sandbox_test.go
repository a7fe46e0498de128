package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/sandbox"
	"github.com/azolla/azolla/internal/executor/sandbox/sandboxtest"
)

// testBundle is one test's host: a data dir it hides, a workspace inside
// it, and the worker environment runs are built from.
type testBundle struct {
	host    *sandbox.Host
	data    string
	work    string
	environ []string
}

const canary = "canary-secret-4f2a9c"

func setup(t *testing.T, mode sandbox.Mode, limits sandbox.Limits) *testBundle {
	t.Helper()
	if mode == sandbox.ModeBwrap {
		sandboxtest.RequireBwrap(t)
	}
	root := t.TempDir()
	data := filepath.Join(root, "data")
	work := filepath.Join(data, "git", "workspaces", "wo-1")
	require.NoError(t, os.MkdirAll(work, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(data, "azolla.db"), []byte("store "+canary), 0o600))
	environ := []string{"PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", "LC_TIME=C", "TZ=UTC",
		"AZOLLA_STORE_DSN=postgres://u:" + canary + "@db/x", "OPENAI_API_KEY=" + canary,
		"HOME=/root", "PASSED=through", "SECRET_TO_PASS=" + canary + "-passed"}
	h, err := sandbox.New(sandbox.Options{Mode: mode, Limits: limits, Hide: []string{data},
		RunsDir: filepath.Join(root, "runs"), Environ: environ})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, h.Close()) })
	return &testBundle{host: h, data: data, work: work, environ: environ}
}

// begin starts a run of policy p; the caller ends it.
func (b *testBundle) begin(t *testing.T, p sandbox.Policy) *sandbox.Run {
	t.Helper()
	if p.Name == "" {
		p.Name = "test"
	}
	e, err := b.host.Executor(p, nil)
	require.NoError(t, err)
	r, err := e.Begin()
	require.NoError(t, err)
	return r
}

// run runs line once for policy p in the workspace and returns its output.
func (b *testBundle) run(t *testing.T, ctx context.Context, p sandbox.Policy, line string) (sandbox.Outcome, string, error) {
	t.Helper()
	r := b.begin(t, p)
	defer func() { require.NoError(t, r.End()) }()
	var out bytes.Buffer
	o, err := r.Exec(ctx, sandbox.Command{Line: line, Dir: b.work, Vars: []string{"AZOLLA_OBJECTIVE_ID=obj-1"},
		Stdout: &out, Stderr: &out})
	return o, out.String(), err
}

func TestExec_EnvironmentIsAnAllowlist(t *testing.T) {
	t.Parallel()
	for _, mode := range []sandbox.Mode{sandbox.ModeNone, sandbox.ModeBwrap} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			b := setup(t, mode, sandbox.Limits{})
			o, out, err := b.run(t, t.Context(), sandbox.Policy{PassEnv: []string{"PASSED", "SECRET_TO_PASS", "NOT_SET"},
				Env: map[string]string{"GOFLAGS": "-mod=mod"}},
				`env | sort; test -d "$HOME" && test -w "$HOME" && test -d "$TMPDIR" && test -w "$TMPDIR" && echo private-dirs-ok`)
			require.NoError(t, err)
			require.Zero(t, o.ExitCode, out)
			var names []string
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				if k, _, ok := strings.Cut(line, "="); ok {
					names = append(names, k)
				}
			}
			require.ElementsMatch(t, []string{"PATH", "LANG", "LC_TIME", "TZ", "HOME", "TMPDIR", "TERM", "PASSED",
				"SECRET_TO_PASS", "GOFLAGS", "AZOLLA_OBJECTIVE_ID", "PWD"}, names, out)
			require.Contains(t, out, "private-dirs-ok")
			require.NotContains(t, out, "HOME=/root")
			require.NotContains(t, out, "postgres://", "azolla's own configuration never reaches a run")
			require.NotContains(t, out, "OPENAI_API_KEY")
		})
	}
}

func TestExecutor_SecretsAreWhatItPasses(t *testing.T) {
	t.Parallel()
	b := setup(t, sandbox.ModeNone, sandbox.Limits{})
	e, err := b.host.Executor(sandbox.Policy{Name: "test", PassEnv: []string{"PASSED", "SECRET_TO_PASS"},
		Env:       map[string]string{"MODEL_ENDPOINT": "https://user:pw@llm.example", "PLAIN": "plain-value"},
		SecretEnv: []string{"MODEL_ENDPOINT"}}, nil)
	require.NoError(t, err)
	require.Equal(t, "[redacted:SECRET_TO_PASS] [redacted:MODEL_ENDPOINT] through plain-value",
		e.Secrets().String(canary+"-passed https://user:pw@llm.example through plain-value"))
	require.Equal(t, "[redacted:OPENAI_API_KEY]", b.host.Secrets().String(canary),
		"the worker's own secret variables are known too")
}

func TestExec_RunDirectoriesAreRemovedAtEnd(t *testing.T) {
	t.Parallel()
	b := setup(t, sandbox.ModeNone, sandbox.Limits{})
	r := b.begin(t, sandbox.Policy{})
	require.NoError(t, os.WriteFile(r.Path("input.md"), []byte("the input"), 0o600))
	var out bytes.Buffer
	_, err := r.Exec(t.Context(), sandbox.Command{Line: `cat "$AZOLLA_INPUT_FILE"; echo home > "$HOME/h"`, Dir: b.work,
		Vars: []string{"AZOLLA_INPUT_FILE=" + r.Path("input.md")}, Stdout: &out})
	require.NoError(t, err)
	require.Equal(t, "the input", out.String())
	require.NoError(t, r.End())
	_, err = os.Stat(filepath.Dir(r.Path("input.md")))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestExec_RefusesDescriptorsThatAreNotAzollaVariables(t *testing.T) {
	t.Parallel()
	b := setup(t, sandbox.ModeNone, sandbox.Limits{})
	r := b.begin(t, sandbox.Policy{})
	defer r.End()
	_, err := r.Exec(t.Context(), sandbox.Command{Line: "true", Dir: b.work, Vars: []string{"LD_PRELOAD=/x.so"}})
	require.ErrorContains(t, err, "not an AZOLLA_* assignment")
	_, err = r.Exec(t.Context(), sandbox.Command{Line: "true", Dir: "/"})
	require.ErrorContains(t, err, "cannot be /")
}

func TestCheckName(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, wantErr string }{
		{"OPENAI_API_KEY", ""},
		{"GOMODCACHE", ""},
		{"AZOLLA_STORE_DSN", "azolla's own configuration"},
		{"azolla_temporal_api_key", "azolla's own configuration"},
		{"AZOLLA_CONTROL_PLANE_REDIS_URL", "azolla's own configuration"},
		{"PGPASSWORD", "store connection"},
		{"HOME", "private HOME"},
		{"TMPDIR", "private TMPDIR"},
		{"1BAD", "not a variable name"},
		{"A=B", "not a variable name"},
	}
	for _, tt := range tests {
		err := sandbox.CheckName(tt.name)
		if tt.wantErr == "" {
			require.NoError(t, err, tt.name)
			continue
		}
		require.ErrorContains(t, err, tt.wantErr, tt.name)
		require.ErrorContains(t, err, tt.name)
	}
}

func TestPolicyCheck_NamesEveryProblemByKey(t *testing.T) {
	t.Parallel()
	err := sandbox.Policy{Name: "patch.command", PassEnv: []string{"AZOLLA_STORE_DSN", "OK"},
		Env: map[string]string{"OK": "x", "HOME": "/h"}, SecretEnv: []string{"ELSEWHERE"}, Network: "lan",
		Home: &sandbox.Bind{Path: "relative"}, Binds: []sandbox.Bind{{Path: "/"}, {Path: "/a/../b"}}}.Check()
	for _, want := range []string{
		"patch.command.pass_env[0]: AZOLLA_STORE_DSN cannot be passed",
		"patch.command.env.HOME: HOME cannot be set",
		"patch.command.env.OK: is also in pass_env",
		"patch.command.secret_env[0]: ELSEWHERE is neither in pass_env nor in env",
		`patch.command.network: must be one of [none allowlist host], got "lan"`,
		"patch.command.home.path: must be an absolute path",
		"patch.command.binds[0].path: cannot be / itself",
		"patch.command.binds[1].path: must be a clean path",
	} {
		require.ErrorContains(t, err, want)
	}
}

func TestNew_Modes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := sandbox.New(sandbox.Options{Mode: sandbox.ModeBwrap, Bwrap: "/nonexistent/bwrap", RunsDir: dir})
	require.ErrorContains(t, err, "bwrap is required and does not work here: /nonexistent/bwrap not found")
	var log bytes.Buffer
	h, err := sandbox.New(sandbox.Options{Mode: sandbox.ModeAuto, Bwrap: "/nonexistent/bwrap", RunsDir: dir,
		Log: slog.New(slog.NewTextHandler(&log, nil))})
	require.NoError(t, err)
	require.Equal(t, sandbox.ModeNone, h.Mode())
	require.Contains(t, log.String(), "executors run without a sandbox")
	require.NoError(t, h.Close())
	_, err = sandbox.New(sandbox.Options{Mode: "docker", RunsDir: dir})
	require.ErrorContains(t, err, `got "docker"`)
}

func TestBwrap_HiddenPathsAndAReadOnlyRoot(t *testing.T) {
	t.Parallel()
	b := setup(t, sandbox.ModeBwrap, sandbox.Limits{})
	require.Equal(t, sandbox.ModeBwrap, b.host.Mode())
	sibling := filepath.Join(b.data, "git", "workspaces", "wo-2")
	require.NoError(t, os.MkdirAll(sibling, 0o755))
	outside := filepath.Join(filepath.Dir(b.data), "outside")
	o, out, err := b.run(t, t.Context(), sandbox.Policy{}, fmt.Sprintf(`
		cat %[1]s/azolla.db && echo READ-STORE
		ls %[2]s && echo SAW-SIBLING
		touch /etc/azolla-sandbox-test && echo WROTE-ETC
		echo x > %[3]s; echo x > %[2]s/f; echo x > $HOME/../../escaped
		cat /proc/1/environ | tr '\0' '\n' | grep -c OPENAI && echo SAW-WORKER-ENV
		echo in-worktree > kept && echo WROTE-WORKTREE`, b.data, sibling, outside))
	require.NoError(t, err)
	require.Zero(t, o.ExitCode, out)
	require.NotContains(t, out, canary)
	for _, leak := range []string{"READ-STORE", "SAW-SIBLING", "WROTE-ETC", "SAW-WORKER-ENV"} {
		require.NotContains(t, out, leak)
	}
	require.Contains(t, out, "WROTE-WORKTREE")
	require.FileExists(t, filepath.Join(b.work, "kept"))
	require.NoFileExists(t, "/etc/azolla-sandbox-test")
	require.NoFileExists(t, outside, "a write outside the worktree leaves nothing")
	require.NoFileExists(t, filepath.Join(sibling, "f"))
	require.NoDirExists(t, filepath.Join(filepath.Dir(b.data), "escaped"))
}

func TestBwrap_ProcShowsTheRunOnly(t *testing.T) {
	t.Parallel()
	b := setup(t, sandbox.ModeBwrap, sandbox.Limits{})
	_, out, err := b.run(t, t.Context(), sandbox.Policy{},
		fmt.Sprintf(`ls /proc | grep -c '^[0-9]'; cat /proc/%d/environ >/dev/null 2>&1 && echo READ-WORKER`, os.Getpid()))
	require.NoError(t, err)
	require.NotContains(t, out, "READ-WORKER")
	var n int
	_, err = fmt.Sscan(out, &n)
	require.NoError(t, err, out)
	require.Less(t, n, 10, "a PID namespace: only the run's processes are listed")
}

func TestBwrap_NetworkPerPolicy(t *testing.T) {
	t.Parallel()
	b := setup(t, sandbox.ModeBwrap, sandbox.Limits{})
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash (for /dev/tcp) is not installed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	connected := make(chan struct{}, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			connected <- struct{}{}
			_ = c.Close()
		}
	}()
	connect := fmt.Sprintf(`bash -c 'echo hi > /dev/tcp/127.0.0.1/%d' && echo CONNECTED`, ln.Addr().(*net.TCPAddr).Port)

	_, out, err := b.run(t, t.Context(), sandbox.Policy{Network: sandbox.NetworkNone}, connect)
	require.NoError(t, err)
	require.NotContains(t, out, "CONNECTED")
	_, out, err = b.run(t, t.Context(), sandbox.Policy{Network: sandbox.NetworkHost}, connect)
	require.NoError(t, err)
	require.Contains(t, out, "CONNECTED")
	<-connected
	select {
	case <-connected:
		t.Fatal("the run with network: none reached the listener")
	default:
	}
}

func TestExecutor_SaysWhichBindsDoNotExist(t *testing.T) {
	t.Parallel()
	b := setup(t, sandbox.ModeBwrap, sandbox.Limits{})
	var log bytes.Buffer
	_, err := b.host.Executor(sandbox.Policy{Name: "patch.command", Binds: []sandbox.Bind{{Path: "/nonexistent/gomodcache"},
		{Path: b.work}}}, slog.New(slog.NewTextHandler(&log, nil)))
	require.NoError(t, err)
	require.Contains(t, log.String(), "binds name paths that do not exist")
	require.Contains(t, log.String(), "/nonexistent/gomodcache")
	require.NotContains(t, log.String(), b.work)
}

func TestBwrap_BindsAndHome(t *testing.T) {
	t.Parallel()
	b := setup(t, sandbox.ModeBwrap, sandbox.Limits{})
	cache := filepath.Join(b.data, "gomodcache")
	home := filepath.Join(b.data, "agent-home")
	for _, d := range []string{cache, home} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(home, "login.json"), []byte("logged in"), 0o600))
	_, out, err := b.run(t, t.Context(), sandbox.Policy{Home: &sandbox.Bind{Path: home},
		Binds: []sandbox.Bind{{Path: cache, Writable: true}}},
		`cat "$HOME/login.json"; echo; echo x > "$HOME/new" || echo HOME-READ-ONLY; echo mod > `+cache+`/m && echo CACHE-WRITTEN`)
	require.NoError(t, err)
	require.Contains(t, out, "logged in")
	require.Contains(t, out, "HOME-READ-ONLY")
	require.Contains(t, out, "CACHE-WRITTEN")
	require.FileExists(t, filepath.Join(cache, "m"))
}

func TestExec_KillingTheRunKillsItsDaemons(t *testing.T) {
	t.Parallel()
	b := setup(t, sandbox.ModeBwrap, sandbox.Limits{})
	marker := fmt.Sprintf("%d.%d", time.Now().UnixNano()%1000, os.Getpid()) // unique sleep argument
	_, _, err := b.run(t, t.Context(), sandbox.Policy{}, `setsid sleep 3600.`+marker+` >/dev/null 2>&1 < /dev/null & echo started`)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(processesWith(t, marker)) == 0 }, 10*time.Second, 20*time.Millisecond,
		"a daemon of the run outlived it")
}

// processesWith lists the pids whose command line holds s.
func processesWith(t *testing.T, s string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte(s)) && !bytes.Contains(cmdline, []byte("go test")) {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestLimits_FileSizeStopsTheWriterAndIsNamed(t *testing.T) {
	t.Parallel()
	for _, mode := range []sandbox.Mode{sandbox.ModeNone, sandbox.ModeBwrap} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			b := setup(t, mode, sandbox.Limits{FileSize: 1 << 20})
			o, _, err := b.run(t, t.Context(), sandbox.Policy{}, `exec head -c 5000000 /dev/zero > big`)
			require.NoError(t, err)
			require.Contains(t, o.Limit, "file size limit (1048576 bytes)")
			fi, err := os.Stat(filepath.Join(b.work, "big"))
			require.NoError(t, err)
			require.LessOrEqual(t, fi.Size(), int64(1<<20))
		})
	}
}

func TestLimits_ForkBombIsContainedAndNamed(t *testing.T) {
	t.Parallel()
	b := setup(t, sandbox.ModeBwrap, sandbox.Limits{Processes: 64})
	if os.Geteuid() == 0 && !b.host.ProcessesByCgroup() {
		t.Skip("running as root without a pids cgroup: RLIMIT_NPROC does not bind root, so nothing would contain the bomb")
	}
	ctx, cancel := context.WithTimeoutCause(t.Context(), 3*time.Second, errors.New("budget"))
	defer cancel()
	// The sandbox dies with its first process: that one waits, and the
	// budget ends the run. It waits by exec, which needs no fork: with the
	// bomb at the limit, a forked sleep may fail and end the run early. For
	// the same reason its only fork is the one subshell the bomb goes off
	// in, made before any of the bomb's processes exist: a shell that
	// forked the bomb's pipeline itself could find the limit reached by its
	// first half before forking its second, and exit (seen under load).
	o, out, err := b.run(t, ctx, sandbox.Policy{}, `(bomb() { bomb | bomb & }; bomb) & exec sleep 60`)
	require.ErrorContains(t, err, "budget")
	require.Contains(t, o.Limit, "process limit (max_processes 64)", out)
	// The machine still forks, and the worker with it.
	require.NoError(t, exec.Command("true").Run())
	_, out, err = b.run(t, t.Context(), sandbox.Policy{}, `echo after`)
	require.NoError(t, err)
	require.Equal(t, "after\n", out)
}

func TestBwrap_ReadOnlyPathsInsideTheWorkingDirectory(t *testing.T) {
	t.Parallel()
	b := setup(t, sandbox.ModeBwrap, sandbox.Limits{})
	gitDir := filepath.Join(b.work, ".git")
	require.NoError(t, os.MkdirAll(gitDir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(gitDir, "config"), []byte("[core]\n"), 0o644))
	r := b.begin(t, sandbox.Policy{})
	defer r.End()
	var out bytes.Buffer
	_, err := r.Exec(t.Context(), sandbox.Command{Dir: b.work, ReadOnly: []string{gitDir},
		Line: `printf '[credential]\n\thelper = !touch /tmp/pwned\n' >> .git/config || echo GIT-READ-ONLY
			touch .git/hooks-new || echo GIT-READ-ONLY
			echo edit > file.txt && echo WORKTREE-WRITABLE`, Stdout: &out, Stderr: &out})
	require.NoError(t, err)
	require.Contains(t, out.String(), "GIT-READ-ONLY")
	require.Contains(t, out.String(), "WORKTREE-WRITABLE")
	cfg, err := os.ReadFile(filepath.Join(gitDir, "config"))
	require.NoError(t, err)
	require.Equal(t, "[core]\n", string(cfg))
	require.NoFileExists(t, filepath.Join(gitDir, "hooks-new"))
}

func TestBwrap_CommandNotFoundSaysWhy(t *testing.T) {
	t.Parallel()
	b := setup(t, sandbox.ModeBwrap, sandbox.Limits{})
	o, _, err := b.run(t, t.Context(), sandbox.Policy{}, `no-such-agent-here --version`)
	require.NoError(t, err)
	require.Equal(t, 127, o.ExitCode)
	require.Contains(t, o.Explain(), "needs a bind")
}

func TestExec_TheCommandLineRunsAsShDashCWouldRunIt(t *testing.T) {
	t.Parallel()
	for _, mode := range []sandbox.Mode{sandbox.ModeNone, sandbox.ModeBwrap} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			b := setup(t, mode, sandbox.Limits{Processes: 512})
			o, out, err := b.run(t, t.Context(), sandbox.Policy{},
				`echo "args [$#][$1]"; printf 'fds ['; ls /proc/self/fd | tr '\n' ' '; echo ']'; read line; echo "stdin [$line]"; exit 7`)
			require.NoError(t, err)
			require.Equal(t, 7, o.ExitCode)
			require.Contains(t, out, "args [0][]\n")
			require.Contains(t, out, "stdin []\n")
			// 0, 1, 2 and ls's own: nothing of the hold is left open.
			require.Regexp(t, `fds \[0 1 2 3 \]`, out)
		})
	}
}

// A home a caller keeps (UseHome) is the run's HOME, writable in the
// sandbox, and what one run leaves there the next finds; a configured
// home stays the run's.
func TestUseHome_TheNextRunFindsWhatTheLastLeft(t *testing.T) {
	t.Parallel()
	for _, mode := range []sandbox.Mode{sandbox.ModeNone, sandbox.ModeBwrap} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			b := setup(t, mode, sandbox.Limits{})
			kept := filepath.Join(b.data, "git", "homes", "obj-1")
			for i, line := range []string{`echo first > "$HOME/session"`, `cat "$HOME/session"; echo "$HOME"`} {
				r := b.begin(t, sandbox.Policy{})
				require.NoError(t, r.UseHome(kept))
				var out bytes.Buffer
				o, err := r.Exec(t.Context(), sandbox.Command{Line: line, Dir: b.work, Stdout: &out, Stderr: &out})
				require.NoError(t, err)
				require.Zero(t, o.ExitCode, out.String())
				require.NoError(t, r.End())
				if i == 1 {
					require.Equal(t, "first\n"+kept+"\n", out.String())
				}
			}
			fi, err := os.Stat(kept)
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), "private to this user")

			configured := filepath.Join(b.data, "configured-home")
			require.NoError(t, os.MkdirAll(configured, 0o755))
			r := b.begin(t, sandbox.Policy{Home: &sandbox.Bind{Path: configured}})
			require.NoError(t, r.UseHome(kept))
			require.Equal(t, configured, r.Home())
			require.NoError(t, r.End())
			require.ErrorContains(t, b.begin(t, sandbox.Policy{}).UseHome("relative"), "not an absolute path")
		})
	}
}
