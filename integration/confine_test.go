package integration

import (
	"context"
	"database/sql"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/proc/proctest"
	"github.com/azolla/azolla/internal/executor/sandbox"
	"github.com/azolla/azolla/internal/executor/sandbox/sandboxtest"
	"github.com/azolla/azolla/internal/store/storetest"
	"github.com/azolla/azolla/starter"
	"github.com/azolla/azolla/workflows"
)

// The confinement tests run azolla's processes as a user would in
// production, with secrets everywhere a real deployment has them: a
// password in the PostgreSQL store's DSN, a Temporal API key, model API
// keys and a forge token in the environment, a configuration file. Every
// executor then runs a spy that prints its environment and every
// /proc/*/environ it can read, lists the data dir, reads the configuration
// and token files and writes outside its directory. None of it may show in
// a record, a log, a workflow history or a branch.

// confineWorld is one deployment: its store, the azolla processes'
// environment, and the secrets planted in it, by name.
type confineWorld struct {
	b        *bundle
	db       *sql.DB
	schema   string
	dataDir  string
	config   string // the configuration file
	env      []string
	canaries map[string]string
	logs     []*proctest.Buffer
	// gateListener counts connections a gate command made to the host's
	// loopback: with network none there must be none.
	gateListener net.Listener
	gateConns    atomic.Int64
}

// newConfineWorld plants the canaries and writes the configuration file
// (config is its YAML below the canary comment line).
func newConfineWorld(t *testing.T, config func(w *confineWorld) string) *confineWorld {
	t.Helper()
	sandboxtest.RequireBwrap(t)
	w := &confineWorld{dataDir: t.TempDir(), canaries: map[string]string{}}
	for _, name := range []string{"dsn password", "temporal api key", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
		"GITEA_TOKEN", "config file line"} {
		w.canaries[name] = "canary" + randomHex(8)
	}
	st, dsn := storetest.NewPostgresDSN(t)
	// Trust auth takes any password: the canary rides in the DSN as it
	// would in production.
	dsn = strings.Replace(dsn, "postgres://postgres@", "postgres://postgres:"+w.canaries["dsn password"]+"@", 1)
	require.Contains(t, dsn, w.canaries["dsn password"], "the test DSN names the postgres user")
	w.schema = regexp.MustCompile(`search_path=([a-z0-9_]+)`).FindStringSubmatch(dsn)[1]
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	w.db = db

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	w.gateListener = ln
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			w.gateConns.Add(1)
			_ = c.Close()
		}
	}()

	taskQueue := "it-" + randomHex(6)
	w.config = filepath.Join(w.dataDir, "azolla.yaml")
	require.NoError(t, os.WriteFile(w.config, []byte("# "+w.canaries["config file line"]+"\n"+config(w)), 0o600))
	w.env = append(os.Environ(),
		"AZOLLA_DATA_DIR="+w.dataDir,
		"AZOLLA_STORE_DRIVER=postgres",
		"AZOLLA_STORE_DSN="+dsn,
		"AZOLLA_TEMPORAL_ADDRESS="+server.FrontendAddress(),
		"AZOLLA_TEMPORAL_TASK_QUEUE="+taskQueue,
		"AZOLLA_TEMPORAL_API_KEY="+w.canaries["temporal api key"],
		"AZOLLA_TEMPORAL_TLS_DISABLED=true",
		"AZOLLA_CLAIM_LEASE_TTL=5s",
		"AZOLLA_LIFECYCLE_POLL_INTERVAL=200ms",
		"AZOLLA_LIFECYCLE_BUDGET=60s",
		"AZOLLA_LOG_LEVEL=info",
		"OPENAI_API_KEY="+w.canaries["OPENAI_API_KEY"],
		"ANTHROPIC_API_KEY="+w.canaries["ANTHROPIC_API_KEY"],
		"GITEA_TOKEN="+w.canaries["GITEA_TOKEN"],
	)
	c := dialClient(t)
	w.b = &bundle{store: st, client: c, starter: &starter.Starter{Client: c, Store: st, TaskQueue: taskQueue}}
	return w
}

// start runs azolla with args as a process of w's, killed with the test;
// its output is kept for the leak check.
func (w *confineWorld) start(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(azollaBin, args...)
	cmd.Env = append(append([]string{}, w.env...), env...)
	out := &proctest.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	w.logs = append(w.logs, out)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("azolla %s:\n%s", args[0], out.String())
		}
	})
	return cmd
}

// run runs azolla with args to completion and returns its stdout.
func (w *confineWorld) run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(azollaBin, args...)
	cmd.Env = w.env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "azolla %v: %s", args, stderr.String())
	return string(out)
}

// spy is a shell script that shows what a run can see: its environment,
// every process environment it can read, the data dir's listing, and the
// files it must not read; then it writes outside its directory. Markers in
// capitals say a read or write that must fail did not.
func spy(dataDir string, forbidden ...string) string {
	var b strings.Builder
	// Every readable process environment, the spy's own included.
	b.WriteString(`echo "== environ"; for f in /proc/[0-9]*/environ; do tr '\000' '\n' < "$f" 2>/dev/null; done | sort -u; `)
	fmt.Fprintf(&b, `echo "== data dir"; ls -la %s 2>&1; `, dataDir)
	for _, f := range append([]string{filepath.Join(dataDir, "azolla.yaml")}, forbidden...) {
		fmt.Fprintf(&b, `cat %s 2>/dev/null && echo READ-FORBIDDEN-FILE; `, f)
	}
	fmt.Fprintf(&b, `echo escaped > %s 2>/dev/null; `, filepath.Join(dataDir, "escaped"))
	b.WriteString(`echo escaped > "$HOME/../../escaped-run" 2>/dev/null; echo "== end"`)
	return b.String()
}

// requireNoCanary fails if any canary shows anywhere azolla writes: every
// row of the store, every process's output, the workflow histories of ids
// and the branches pushed to remote.
func (w *confineWorld) requireNoCanary(t *testing.T, ids []string, remote string) {
	t.Helper()
	sinks := map[string]string{}
	rows, err := w.db.Query(`SELECT table_name FROM information_schema.tables WHERE table_schema = $1`, w.schema)
	require.NoError(t, err)
	var tables []string
	for rows.Next() {
		var name string
		require.NoError(t, rows.Scan(&name))
		tables = append(tables, name)
	}
	require.NoError(t, rows.Close())
	require.Contains(t, tables, "output_bundles")
	for _, table := range tables {
		var dump sql.NullString
		require.NoError(t, w.db.QueryRow(fmt.Sprintf(`SELECT string_agg(row_to_json(t)::text, E'\n') FROM %s.%s t`,
			w.schema, table)).Scan(&dump))
		sinks["table "+table] = dump.String
	}
	for i, l := range w.logs {
		sinks[fmt.Sprintf("process log %d", i)] = l.String()
	}
	for _, id := range ids {
		sinks["history of "+id] = historyText(t, w.b, workflows.ObjectiveWorkflowID(id))
	}
	if remote != "" {
		sinks["pushed branches"] = gitIn(t, remote, "log", "-p", "--all")
	}
	for sink, text := range sinks {
		for name, canary := range w.canaries {
			require.NotContains(t, text, canary, "the %s shows in the %s", name, sink)
		}
	}
}

// historyText is a workflow's history as JSON, with every payload decoded.
func historyText(t *testing.T, b *bundle, workflowID string) string {
	t.Helper()
	var events []*historypb.HistoryEvent
	it := b.client.GetWorkflowHistory(context.Background(), workflowID, "", false,
		enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		events = append(events, ev)
	}
	raw, err := protojson.Marshal(&historypb.History{Events: events})
	require.NoError(t, err)
	text := string(raw)
	for _, m := range regexp.MustCompile(`"data":"([A-Za-z0-9+/=]+)"`).FindAllStringSubmatch(text, -1) {
		if d, err := base64.StdEncoding.DecodeString(m[1]); err == nil {
			text += "\n" + string(d)
		}
	}
	return text
}

// bundleOf returns the output bundle of objective id's first workorder.
func (w *confineWorld) bundleOf(t *testing.T, id string) *domain.OutputBundle {
	t.Helper()
	ob, err := w.b.store.GetOutputBundle(context.Background(), "wo-"+id+"-1")
	require.NoError(t, err)
	return ob
}

// requireSpyBlind checks what a spy printed: it ran, saw its allowlisted
// environment and nothing it must not.
func requireSpyBlind(t *testing.T, what, out string) {
	t.Helper()
	require.Contains(t, out, "== end", "%s: the spy ran", what)
	require.Contains(t, out, "TMPDIR=", "%s: the spy saw its own environment", what)
	for _, leak := range []string{"READ-FORBIDDEN-FILE", "AZOLLA_STORE", "AZOLLA_TEMPORAL", "azolla.yaml", "GITEA_TOKEN",
		"OPENAI_API_KEY"} {
		require.NotContains(t, out, leak, "%s: the run saw %s", what, leak)
	}
}

// poison tries to make azolla's own git runs on the workspace, which come
// after the run and outside its sandbox, run a command of the run's: a
// credential helper (push) and a clean filter (diff, add) that would write
// marker. It prints GIT-CONFIG-WRITTEN if it could.
func poison(marker string) string {
	return fmt.Sprintf(`printf '[credential]\n\thelper = !touch %[1]s\n[filter "x"]\n\tclean = touch %[1]s; cat\n' >> .git/config 2>/dev/null && echo GIT-CONFIG-WRITTEN; mkdir -p .git/info 2>/dev/null; echo '* filter=x' >> .git/info/attributes 2>/dev/null`, marker)
}

func TestConfine_NoSecretReachesARunOrARecord(t *testing.T) {
	t.Parallel()
	repo := sampleRepo(t)
	pwned := filepath.Join(t.TempDir(), "pwned")
	remote := filepath.Join(t.TempDir(), "pushed.git")
	gitIn(t, t.TempDir(), "init", "-q", "--bare", remote)
	w := newConfineWorld(t, func(w *confineWorld) string {
		gateNet := fmt.Sprintf(`bash -c 'echo hi > /dev/tcp/127.0.0.1/%d' 2>/dev/null && echo GATE-NET-CONNECTED`,
			w.gateListener.Addr().(*net.TCPAddr).Port)
		return fmt.Sprintf(`
diazotroph:
  command:
    run: %q
    pass_env: [ANTHROPIC_API_KEY]
patch:
  command:
    run: %q
  repositories:
    - repository: %s
      push_remote: %s
      gate_commands: [%q]
executor:
  sandbox: bwrap
`,
			// COMMAND_DIAZOTROPH: its stdout is the bundle; it also echoes
			// the key it was given on purpose, which must be redacted.
			spy(w.dataDir)+`; echo "given: $ANTHROPIC_API_KEY"`,
			// The agent: spies on stderr (the notes quote its tail) and
			// edits the worktree (the patch).
			"{ "+spy(w.dataDir)+"; "+poison(pwned)+"; } >&2; echo 'agent was here' >> README.md",
			repo, remote,
			// The gate: spies, tries the host's loopback, and fails, so
			// its output tail lands in the gate reason and pause state.
			spy(w.dataDir)+"; "+gateNet+"; "+poison(pwned)+"; exit 1")
	})
	w.start(t, nil, "worker", "--identity", "confined")

	cmdID, patchID := uniqueID("confine-cmd"), uniqueID("confine-patch")
	w.b.create(t, cmdID)
	w.b.create(t, patchID, patchObjective(repo), func(o *domain.Objective) { o.Generator, o.Patch = "command", "" })
	for _, id := range []string{cmdID, patchID} {
		_, err := w.b.starter.Decide(context.Background(), id, workflows.Approve, workflows.Decision{By: "tester"})
		require.NoError(t, err)
	}
	w.b.waitStep(t, cmdID, workflows.StepDone)
	w.b.waitStep(t, patchID, workflows.StepAwaitingRetry)

	// COMMAND_DIAZOTROPH ran blind, and what it echoed was redacted.
	cmdBundle := w.bundleOf(t, cmdID)
	requireSpyBlind(t, "COMMAND_DIAZOTROPH", cmdBundle.Content)
	require.Contains(t, cmdBundle.Content, "given: [redacted:ANTHROPIC_API_KEY]")

	// The agent ran blind and its patch was committed and pushed.
	patchBundle := w.bundleOf(t, patchID)
	require.Equal(t, domain.RunnerOK, patchBundle.RunnerStatus, patchBundle.Notes)
	requireSpyBlind(t, "the command generator", patchBundle.Notes)
	require.Contains(t, patchBundle.Content, "+agent was here")

	// The gate ran blind, without the host's network, and failed as told.
	rr, err := w.b.store.GetRunRecord(context.Background(), "wo-"+patchID+"-1")
	require.NoError(t, err)
	require.Equal(t, domain.GateFail, rr.GateResult)
	require.Contains(t, rr.GateReason, "exited with status 1")
	// The reason quotes the command, then the output's tail.
	_, gateOut, ok := strings.Cut(rr.GateReason, "output tail:")
	require.True(t, ok, rr.GateReason)
	requireSpyBlind(t, "the gate", gateOut)
	require.NotContains(t, gateOut, "GATE-NET-CONNECTED")
	require.Zero(t, w.gateConns.Load(), "a gate command reached the host's loopback")

	require.NoFileExists(t, filepath.Join(w.dataDir, "escaped"), "a run wrote into the data dir")
	require.NotContains(t, patchBundle.Notes+gateOut, "GIT-CONFIG-WRITTEN")
	require.NoFileExists(t, pwned, "a command of the run's ran through azolla's own git")
	w.requireNoCanary(t, []string{cmdID, patchID}, remote)
	w.b.requireAuditClean(t)
	require.Contains(t, w.logs[0].String(), "executors run in a bubblewrap sandbox")
}

func TestConfine_ARemoteJobSeesNeitherTheWorkersNorTheControlPlanesSecrets(t *testing.T) {
	t.Parallel()
	w := newConfineWorld(t, func(*confineWorld) string {
		return "control_plane:\n  remote_diazotrophs: [COMMAND_DIAZOTROPH]\n"
	})
	cpAddr := fmt.Sprintf("127.0.0.1:%d", freePort())
	cp := []string{"AZOLLA_CONTROL_PLANE_ADDRESS=" + cpAddr, "AZOLLA_CONTROL_PLANE_LEASE_TTL=3s",
		"AZOLLA_CONTROL_PLANE_HEARTBEAT_INTERVAL=1s", "AZOLLA_CONTROL_PLANE_REAPER_INTERVAL=300ms",
		"AZOLLA_OPS_ADDRESS="}
	token := strings.TrimSpace(w.run(t, "worker-token", "create", "remote-confined"))
	w.canaries["worker token"] = token
	remoteDir := t.TempDir()
	tokenFile := filepath.Join(remoteDir, "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(token+"\n"), 0o600))

	w.start(t, cp, "control-plane", "--identity", "cp")
	w.start(t, cp, "worker", "--identity", "local")
	// The remote worker has no store, no Temporal and none of the
	// deployment's secrets: only its token, and the model keys of its
	// environment.
	remoteEnv := []string{"AZOLLA_DATA_DIR=" + remoteDir, "AZOLLA_STORE_DSN=", "AZOLLA_TEMPORAL_API_KEY=",
		"AZOLLA_TEMPORAL_TLS_DISABLED=", "AZOLLA_STORE_DRIVER=", "AZOLLA_EXECUTOR_SANDBOX=bwrap",
		"AZOLLA_DIAZOTROPH_COMMAND_RUN=" + spy(remoteDir, tokenFile)}
	w.start(t, remoteEnv, "remote-worker", "--control-plane", "http://"+cpAddr, "--token-file", tokenFile,
		"--worker-id", "remote-confined", "--max-wait", "2s")

	id := uniqueID("confine-remote")
	w.b.create(t, id)
	_, err := w.b.starter.Decide(context.Background(), id, workflows.Approve, workflows.Decision{By: "tester"})
	require.NoError(t, err)
	w.b.waitStep(t, id, workflows.StepDone)

	j, err := w.b.store.GetJobByWorkOrder(context.Background(), "wo-"+id+"-1")
	require.NoError(t, err)
	require.Equal(t, domain.JobSucceeded, j.Status, "it ran as a remote job")
	requireSpyBlind(t, "the remote job", w.bundleOf(t, id).Content)
	w.requireNoCanary(t, []string{id}, "")
}

func TestConfine_LimitsEndARunAsItsOutcomeAndTheWorkerGoesOn(t *testing.T) {
	t.Parallel()
	sandboxtest.RequireBwrap(t)
	// One command for every objective, by the objective's id: a fork bomb,
	// a file larger than allowed, a spy on the SQLite store, or plain work.
	// The bomb's shell starts its sleep before the bomb, and then only
	// waits (a builtin): a fork refused to it once the bomb has taken
	// every process would end the run early, and not by its budget.
	command := `case "$AZOLLA_OBJECTIVE_ID" in
bomb-*) sleep 600 & bomb() { bomb | bomb & }; bomb; wait ;;
big-*) head -c 5000000 /dev/zero > big; echo "wrote $(wc -c < big) bytes" ;;
spy-*) cat "$STORE" >/dev/null 2>&1 && echo READ-STORE; ls "$(dirname "$STORE")"; echo spied ;;
*) echo plain work ;;
esac`
	b := setup(t, setupOptions{command: command, configure: func(c *config.Config) {
		c.Executor.Sandbox, c.Executor.MaxProcesses, c.Executor.MaxFileSizeMB = config.SandboxBwrap, 64, 1
		c.Lifecycle.Budget = 5 * time.Second
		c.Diazotroph.Command.Env = map[string]string{"STORE": c.SQLitePath()}
	}})
	if os.Geteuid() == 0 && !cgroupPids() {
		t.Skip("root without a pids cgroup: RLIMIT_NPROC does not bind root, so nothing would contain the bomb")
	}
	ctx := context.Background()
	approve := func(id string) {
		b.create(t, id)
		_, err := b.starter.Decide(ctx, id, workflows.Approve, workflows.Decision{By: "tester"})
		require.NoError(t, err)
	}
	bomb, big, spied, plain := uniqueID("bomb"), uniqueID("big"), uniqueID("spy"), uniqueID("plain")
	approve(bomb)
	b.waitStep(t, bomb, workflows.StepRunning)
	for _, id := range []string{big, spied, plain} {
		approve(id)
	}
	// The worker serves the others while the bomb goes off.
	b.waitStep(t, plain, workflows.StepDone)
	b.waitStep(t, spied, workflows.StepDone)

	st := b.waitStep(t, bomb, workflows.StepAwaitingRetry)
	require.Contains(t, st.GateReason, "budget exhausted")
	bombBundle, err := b.store.GetOutputBundle(ctx, "wo-"+bomb+"-1")
	require.NoError(t, err)
	require.Equal(t, domain.RunnerBudgetExhausted, bombBundle.RunnerStatus)
	require.Contains(t, bombBundle.Notes, "the run hit its process limit (max_processes 64)")

	b.waitStep(t, big, workflows.StepDone)
	bigBundle, err := b.store.GetOutputBundle(ctx, "wo-"+big+"-1")
	require.NoError(t, err)
	require.Contains(t, bigBundle.Content, "wrote 1048576 bytes")

	spyBundle, err := b.store.GetOutputBundle(ctx, "wo-"+spied+"-1")
	require.NoError(t, err)
	require.Contains(t, spyBundle.Content, "spied")
	require.NotContains(t, spyBundle.Content, "READ-STORE")
	require.NotContains(t, spyBundle.Content, "azolla.db", "the data dir is empty inside the sandbox")
	b.requireAuditClean(t)
}

// cgroupPids reports whether this host lets azolla put runs in pids
// cgroups, as a worker here would.
func cgroupPids() bool {
	h, err := sandbox.New(sandbox.Options{Mode: sandbox.ModeNone, RunsDir: filepath.Join(os.TempDir(), "azolla-probe-runs")})
	if err != nil {
		return false
	}
	defer h.Close()
	return h.ProcessesByCgroup()
}
