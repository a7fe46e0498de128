package cli

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWorker_RefusesToPassAzollasOwnSettingsToARun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		file string
		want string
	}{
		{"by environment", map[string]string{"AZOLLA_DIAZOTROPH_COMMAND_PASS_ENV": "PATH,AZOLLA_STORE_DSN"}, "",
			"diazotroph.command.pass_env[1]: AZOLLA_STORE_DSN cannot be passed: AZOLLA_* variables hold azolla's own configuration"},
		{"in the config file", nil, "patch:\n  command:\n    pass_env: [AZOLLA_TEMPORAL_API_KEY]\n",
			"patch.command.pass_env[0]: AZOLLA_TEMPORAL_API_KEY cannot be passed"},
		{"a gate's", nil, "patch:\n  repositories:\n    - repository: /r\n      gate_pass_env: [PGPASSWORD]\n",
			"patch.repositories[0].gate_pass_env[0]: PGPASSWORD cannot be passed: azolla's store connection reads it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := []string{"worker"}
			if tt.file != "" {
				args = append(args, "--config", writeFile(t, t.TempDir(), "azolla.yaml", tt.file))
			}
			res := azolla(t, tt.env, args...)
			require.Equal(t, exitUsage, res.code, res.stderr)
			require.Contains(t, res.stderr, tt.want)
			require.Contains(t, res.stderr, "invalid configuration")
		})
	}
}
