package diazotroph_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A command may report its run in $AZOLLA_REPORT_FILE: a valid report is
// the bundle's, a bad one a note; the run's outcome is the same either way.
func TestCommand_RunReportFromTheReportFile(t *testing.T) {
	t.Parallel()
	res := execute(t, `printf '{"model":"m-1","cost_usd":0.05,"turns":2}' > "$AZOLLA_REPORT_FILE"; echo done`, "")
	require.Equal(t, "done\n", res.Content)
	require.NotNil(t, res.Metadata.RunReport)
	require.Equal(t, "m-1", res.Metadata.RunReport.Model)
	require.Equal(t, 0.05, *res.Metadata.RunReport.CostUSD)
	require.EqualValues(t, 2, res.Metadata.RunReport.Turns)

	res = execute(t, `printf '{"cost_usd":-3}' > "$AZOLLA_REPORT_FILE"; echo done`, "")
	require.Equal(t, "done\n", res.Content)
	require.Nil(t, res.Metadata.RunReport)
	require.Contains(t, res.Notes, "run report ignored: ")
	require.Contains(t, res.Notes, "/cost_usd")

	res = execute(t, `echo done`, "")
	require.Nil(t, res.Metadata.RunReport, "no file, no report")
	require.NotContains(t, res.Notes, "run report")
}
