package integration

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
)

// The command line a user types, against a worker process: create, approve,
// watch to DONE, show, a refused second approval, list and verify.
func TestCLI_ObjectiveFromCreateToDone(t *testing.T) {
	t.Parallel()
	idCli := uniqueID("cli")
	b := setup(t, setupOptions{noWorker: true})
	b.workerProcess(t, "cli")
	run := func(args ...string) (string, int) {
		cmd := exec.Command(azollaBin, args...)
		cmd.Env = b.workerEnv()
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		return string(out), code
	}

	out, code := run("objective", "create", "--id", idCli, "--title", "Write the release notes", "--criteria", "they list every change")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "created objective "+idCli+" (NEW): lifecycle started, awaiting approval")

	out, code = run("objective", "approve", idCli, "--by", "alice", "--comment", "go")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "approve "+idCli+": emitted ev-"+idCli+"-1")

	out, code = run("objective", "watch", idCli, "--timeout", "90s")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "RUN_COMPLETE")
	require.Contains(t, out, "2. Confirm completion")

	out, code = run("objective", "show", idCli, "--output", "json")
	require.Equal(t, 0, code, out)
	var d struct {
		Objective  domain.Objective
		WorkOrders []struct {
			OutputBundle domain.OutputBundle `json:"output_bundle"`
			RunRecord    domain.RunRecord    `json:"run_record"`
		} `json:"workorders"`
		Lifecycle struct{ Step string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &d))
	require.Equal(t, domain.StatusDone, d.Objective.Status)
	require.Equal(t, "done", d.Lifecycle.Step)
	require.Len(t, d.WorkOrders, 1)
	require.Equal(t, domain.GatePass, d.WorkOrders[0].RunRecord.GateResult)
	require.Contains(t, d.WorkOrders[0].OutputBundle.Content, "Write the release notes")

	out, code = run("objective", "approve", idCli)
	require.Equal(t, 4, code, "approving a DONE objective is refused: %s", out)
	require.Equal(t, 1, strings.Count(out, "\n"), "one line: %s", out)

	out, code = run("objective", "list", "--status", "DONE")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, idCli+" ")
	out, code = run("verify")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "0 violations")
}
