package patchgen_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
)

// A command may report its run in $AZOLLA_REPORT_FILE, outside the
// worktree: a valid report is on the output; a bad one is a note, and the
// run's patch is taken all the same; none is no report.
func TestCommand_RunReportFromTheReportFile(t *testing.T) {
	t.Parallel()
	out, _ := generate(t, `sed -i 's/world/there/' hello.txt && `+
		`printf '{"model":"m-1","cost_usd":0.125,"tokens":{"input":1200,"output":80},"turns":3,"summary":"renamed"}' > "$AZOLLA_REPORT_FILE"`)
	require.NotEmpty(t, out.Patch)
	require.NotNil(t, out.Report)
	require.Equal(t, "m-1", out.Report.Model)
	require.NotNil(t, out.Report.CostUSD)
	require.InDelta(t, 0.125, *out.Report.CostUSD, 1e-9)
	require.Equal(t, int64(1200), out.Report.Tokens.Input)
	require.Equal(t, int64(3), out.Report.Turns)
	require.Equal(t, domain.ReportFromExecutor, out.Report.Source)
	require.NotContains(t, out.Patch, "report.json", "the report file is not part of the patch")

	bad, _ := generate(t, `sed -i 's/world/there/' hello.txt && printf '{"cost_usd":-1}' > "$AZOLLA_REPORT_FILE"`)
	require.NotEmpty(t, bad.Patch, "a bad report does not fail the run")
	require.Nil(t, bad.Report)
	require.Contains(t, bad.Notes, "run report ignored:")
	require.Contains(t, bad.Notes, "cost_usd")

	none, _ := generate(t, `sed -i 's/world/there/' hello.txt`)
	require.Nil(t, none.Report)
	require.NotContains(t, none.Notes, "run report")
}
