package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/sandbox/sandboxtest"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/workflows"
)

// setupWorld is a repository whose agent is the stand-in that fixes its
// greeting, and an azolla with nothing configured for it but its gate
// commands.
type setupWorld struct {
	*bundle
	repo string
}

func setupRepository(t testing.TB, repo, agent string, gate []string, environ []string,
	rc func(*config.RepositoryConfig)) *setupWorld {
	t.Helper()
	sandboxtest.RequireBwrap(t)
	r := config.RepositoryConfig{Repository: repo, GateCommands: gate}
	if rc != nil {
		rc(&r)
	}
	b := setup(t, setupOptions{environ: environ, configure: func(c *config.Config) {
		c.Patch.Command.Run = agent
		c.Patch.Repositories = []config.RepositoryConfig{r}
		c.Lifecycle.Budget = 2 * time.Minute
	}})
	return &setupWorld{bundle: b, repo: repo}
}

// setupRunBound bounds the wait for a run on a prepared repository: a cold
// environment is built (modules fetched, a first compile in the sandbox),
// then the agent runs within the lifecycle's budget (two minutes here) and
// the gate after it. On a machine busy with the whole suite that is more
// than waitStep's ninety seconds.
const setupRunBound = 6 * time.Minute

// approveAndWait runs an objective on the repository to its next pause.
func (w *setupWorld) approveAndWait(t testing.TB, id, step string) workflows.State {
	t.Helper()
	w.create(t, id, func(o *domain.Objective) {
		o.Repository, o.BaseBranch, o.Generator = w.repo, "main", config.GeneratorCommand
	})
	w.waitStep(t, id, workflows.StepAwaitingApproval)
	_, err := w.starter.Decide(context.Background(), id, workflows.Approve, workflows.Decision{By: "tester"})
	require.NoError(t, err)
	return w.waitStepWithin(t, id, step, setupRunBound)
}

// lastRun is the objective's newest workorder's bundle and run record.
func (w *setupWorld) lastRun(t *testing.T, id string) (*domain.OutputBundle, *domain.RunRecord) {
	t.Helper()
	ctx := context.Background()
	wos, err := w.store.ListWorkOrders(ctx, store.ListWorkOrdersParams{ObjectiveID: id})
	require.NoError(t, err)
	require.NotEmpty(t, wos)
	last := wos[len(wos)-1]
	b, err := w.store.GetOutputBundle(ctx, last.WorkOrderID)
	require.NoError(t, err)
	rr, err := w.store.GetRunRecord(ctx, last.WorkOrderID)
	require.NoError(t, err)
	return b, rr
}

// The Go repository: one ordinary dependency, a failing test, a
// stand-in agent that fixes the code, `go test ./...` as the gate, and no
// setup configured. The worker knows only where modules come from (its
// GOPROXY, here a local file:// proxy). The first objective builds the
// environment and passes; the second finds it warm, and its gate finds
// the dependency already compiled in the build cache.
func TestSetup_AGoRepositoryWithADependencyNeedsNoSetting(t *testing.T) {
	t.Parallel()
	proxy, sum := goProxy(t)
	w := setupRepository(t, goRepository(t, sum), fixWrld,
		[]string{"go test ./...", "test \"$(go list -f '{{.Stale}}' example.com/greet)\" = false"},
		[]string{"GOPROXY=" + proxy, "GOSUMDB=off"}, nil)

	id := uniqueID("go-cold")
	w.approveAndWait(t, id, workflows.StepDone)
	b, rr := w.lastRun(t, id)
	require.Equal(t, domain.GatePass, rr.GateResult, rr.GateReason)
	require.Contains(t, b.Notes, "environment built in")
	require.Contains(t, b.Notes, "go environment")
	require.Contains(t, b.Content, "+func Greeting() string { return greet.Hello(\"world\") }")

	warm := uniqueID("go-warm")
	w.approveAndWait(t, warm, workflows.StepDone)
	b, rr = w.lastRun(t, warm)
	require.Equal(t, domain.GatePass, rr.GateResult, rr.GateReason)
	require.Contains(t, b.Notes, "environment warm: go environment")
	require.Contains(t, rr.GateReason, "environment warm", "the gate ran in the warm environment: its dependency compiled")
	w.requireAuditClean(t)
}

// A Node repository with a lockfile, its dependency on a registry the
// worker's npm_config_registry names: DONE with nothing configured, and
// node_modules never part of the patch.
func TestSetup_ANodeRepositoryNeedsNoSetting(t *testing.T) {
	t.Parallel()
	tarball, integrity := npmRegistry(t)
	registry := tarball[:strings.Index(tarball, "/greet/")] + "/"
	w := setupRepository(t, nodeRepository(t, tarball, integrity), fixWrld, []string{"node test.js"},
		[]string{"npm_config_registry=" + registry}, nil)
	id := uniqueID("node")
	w.approveAndWait(t, id, workflows.StepDone)
	b, rr := w.lastRun(t, id)
	require.Equal(t, domain.GatePass, rr.GateResult, rr.GateReason)
	require.Contains(t, b.Notes, "node environment")
	require.NotContains(t, b.Content, "node_modules", "the environment's link is not the agent's work")

	again := uniqueID("node-warm")
	w.approveAndWait(t, again, workflows.StepDone)
	b, _ = w.lastRun(t, again)
	require.Contains(t, b.Notes, "environment warm: node environment")
}

// A Python repository with requirements.txt, its wheel in a directory the
// worker's PIP_FIND_LINKS names: DONE with nothing configured.
func TestSetup_APythonRepositoryNeedsNoSetting(t *testing.T) {
	t.Parallel()
	w := setupRepository(t, pythonRepository(t), fixWrld, []string{"python -m unittest -v"},
		[]string{"PIP_FIND_LINKS=" + wheels(t), "PIP_NO_INDEX=1"}, nil)
	id := uniqueID("py")
	w.approveAndWait(t, id, workflows.StepDone)
	b, rr := w.lastRun(t, id)
	require.Equal(t, domain.GatePass, rr.GateResult, rr.GateReason)
	require.Contains(t, b.Notes, "python environment")
	require.NotContains(t, b.Content, "__pycache__")
}

// A setup that fails blocks the objective before any agent runs: its
// blocker names the command and the pause what to fix; nothing is spent
// and no failed round is charged. Once the cause is gone, unblock runs the
// setup again and the objective ends DONE.
func TestSetup_AFailedSetupBlocksThenUnblockRunsIt(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	repo := sampleRepo(t)
	w := setupRepository(t, repo, "echo more >> hello.txt", []string{"true"}, nil, func(r *config.RepositoryConfig) {
		r.Setup = config.SetupConfig{Commands: []string{`echo "mirror down" >&2; test -f "` + state + `/up"`},
			Binds: []config.BindConfig{{Path: state}}}
	})
	id := uniqueID("setup-fail")
	st := w.approveAndWait(t, id, workflows.StepAwaitingUnblock)
	require.Equal(t, domain.StatusBlocked, st.Status)
	b, rr := w.lastRun(t, id)
	require.Equal(t, domain.RunnerEnvironmentFailed, b.RunnerStatus)
	require.Contains(t, b.Notes, "mirror down", "the setup's output tail")
	require.Contains(t, b.Notes, "no agent ran")
	require.Empty(t, b.Content)
	require.Nil(t, b.Metadata.RunReport, "nothing was spent")
	require.Equal(t, domain.GateFail, rr.GateResult)
	require.Equal(t, domain.BlameEnvironment, rr.Blame)
	o, err := w.store.GetObjective(context.Background(), id)
	require.NoError(t, err)
	require.Len(t, o.Blockers, 1)
	require.True(t, strings.HasPrefix(o.Blockers[0], "environment: setup: "), o.Blockers[0])
	require.Equal(t, domain.PauseBlocked, st.LastPause.Reason)
	require.Contains(t, strings.Join(st.LastPause.PrioritizedActions, "\n"), "Fix the environment")

	require.NoError(t, os.WriteFile(filepath.Join(state, "up"), nil, 0o644))
	_, err = w.starter.Decide(context.Background(), id, workflows.Unblock, workflows.Decision{By: "tester"})
	require.NoError(t, err)
	w.waitStepWithin(t, id, workflows.StepDone, setupRunBound)
	_, rr = w.lastRun(t, id)
	require.Equal(t, domain.GatePass, rr.GateResult, rr.GateReason)
	w.requireAuditClean(t)
}

// A gate command the worker does not have is the environment's failure,
// not the agent's round: BLOCKED, with the fix.
func TestSetup_AGateCommandThatCannotStartIsTheEnvironments(t *testing.T) {
	t.Parallel()
	repo := sampleRepo(t)
	w := setupRepository(t, repo, "echo more >> hello.txt", []string{"no-such-tool-azolla --check"}, nil, nil)
	id := uniqueID("no-tool")
	st := w.approveAndWait(t, id, workflows.StepAwaitingUnblock)
	require.Equal(t, domain.StatusBlocked, st.Status)
	b, rr := w.lastRun(t, id)
	require.Equal(t, domain.RunnerOK, b.RunnerStatus, "the agent's run went fine")
	require.Equal(t, domain.BlameEnvironment, rr.Blame)
	require.Contains(t, rr.GateReason, "exited with status 127")
	require.Contains(t, rr.GateReason, "fix: the gate command was not found")
	w.requireAuditClean(t)
}

// Setup is read from the base commit: a patch that rewrites the
// repository's .azolla/setup.sh changes neither the environment it ran in
// nor the one its gate judges it in.
func TestSetup_APatchThatRewritesTheSetupDoesNotChangeIt(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "app")
	writeFiles(t, dir, map[string]string{
		"hello.txt":        "hello\n",
		".azolla/setup.sh": `echo base > "$TOOLS_DIR/marker"` + "\n",
	})
	repo := commitAll(t, dir)
	agent := `echo 'echo patched > "$TOOLS_DIR/marker"' > .azolla/setup.sh && echo more >> hello.txt`
	w := setupRepository(t, repo, agent, []string{`grep -qx base "$TOOLS_DIR/marker"`}, nil, func(r *config.RepositoryConfig) {
		r.Setup = config.SetupConfig{FromRepository: true, Caches: []config.CacheConfig{{Env: "TOOLS_DIR"}}}
	})
	id := uniqueID("setup-patched")
	w.approveAndWait(t, id, workflows.StepDone)
	b, rr := w.lastRun(t, id)
	require.Equal(t, domain.GatePass, rr.GateResult, rr.GateReason)
	require.Contains(t, b.Content, "+echo patched", "the patch rewrote the setup")
	require.Contains(t, b.Notes, "custom environment")

	again := uniqueID("setup-patched-2")
	w.approveAndWait(t, again, workflows.StepDone)
	b, _ = w.lastRun(t, again)
	require.Contains(t, b.Notes, "environment warm", "the base commit, not the patch, keys the environment")
}
