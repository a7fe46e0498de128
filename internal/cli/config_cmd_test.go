package cli

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/azolla/azolla/internal/config"
)

func showJSON(t *testing.T, env map[string]string, args ...string) config.Config {
	t.Helper()
	res := azolla(t, env, append([]string{"config", "show", "--output", "json"}, args...)...)
	require.Equal(t, 0, res.code, "stderr: %s", res.stderr)
	var cfg config.Config
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &cfg), res.stdout)
	return cfg
}

func TestConfigShowPrecedenceIsFlagOverEnvOverFileOverDefault(t *testing.T) {
	t.Parallel()
	const file = "log:\n  level: warn\nclaim:\n  lease_ttl: 90s\n"
	tests := []struct {
		name      string
		withFile  bool
		env       map[string]string
		flags     []string
		wantLevel string
		wantTTL   time.Duration
	}{
		{name: "defaults", wantLevel: "info", wantTTL: 60 * time.Second},
		{name: "file over default", withFile: true, wantLevel: "warn", wantTTL: 90 * time.Second},
		{name: "env over file", withFile: true,
			env:       map[string]string{"AZOLLA_LOG_LEVEL": "error", "AZOLLA_CLAIM_LEASE_TTL": "2m"},
			wantLevel: "error", wantTTL: 2 * time.Minute},
		{name: "flag over env", withFile: true,
			env:       map[string]string{"AZOLLA_LOG_LEVEL": "error"},
			flags:     []string{"--log-level", "debug"},
			wantLevel: "debug", wantTTL: 90 * time.Second},
		{name: "empty env counts as unset", withFile: true,
			env:       map[string]string{"AZOLLA_LOG_LEVEL": ""},
			wantLevel: "warn", wantTTL: 90 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := tt.flags
			if tt.withFile {
				args = append(args, "--config", writeFile(t, t.TempDir(), "azolla.yaml", file))
			}
			cfg := showJSON(t, tt.env, args...)
			require.Equal(t, tt.wantLevel, cfg.Log.Level)
			require.Equal(t, tt.wantTTL, cfg.Claim.LeaseTTL)
		})
	}
}

func TestConfigShowReadsTheFileInTheDataDir(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		env   func(dir string) map[string]string
		flags func(dir string) []string
	}{
		{name: "data dir from env",
			env: func(dir string) map[string]string { return map[string]string{"AZOLLA_DATA_DIR": dir} }},
		{name: "data dir from flag",
			flags: func(dir string) []string { return []string{"--data-dir", dir} }},
		{name: "data dir from XDG_DATA_HOME",
			env: func(dir string) map[string]string {
				return map[string]string{"XDG_DATA_HOME": filepath.Dir(dir)}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "azolla")
			writeFile(t, dir, "azolla.yaml", "log:\n  format: json\n")
			var env map[string]string
			var flags []string
			if tt.env != nil {
				env = tt.env(dir)
			}
			if tt.flags != nil {
				flags = tt.flags(dir)
			}
			cfg := showJSON(t, env, flags...)
			require.Equal(t, dir, cfg.DataDir)
			require.Equal(t, "json", cfg.Log.Format)
		})
	}
}

func TestConfigShowPrefersTheWorkingDirectoryFile(t *testing.T) {
	// t.Chdir: not parallel.
	dataDir := t.TempDir()
	writeFile(t, dataDir, "azolla.yaml", "log:\n  level: error\n")
	cwd := t.TempDir()
	writeFile(t, cwd, "azolla.yaml", "log:\n  level: warn\n")
	t.Chdir(cwd)
	cfg := showJSON(t, map[string]string{"AZOLLA_DATA_DIR": dataDir})
	require.Equal(t, "warn", cfg.Log.Level)
}

func TestConfigShowMasksTheDSNPassword(t *testing.T) {
	t.Parallel()
	const dsn = "postgres://azolla:hunter2@db:5432/azolla?sslmode=disable"
	for _, format := range []string{"yaml", "json"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			res := azolla(t, map[string]string{"AZOLLA_STORE_DSN": dsn},
				"config", "show", "--store-driver", "postgres", "--output", format)
			require.Equal(t, 0, res.code, res.stderr)
			require.NotContains(t, res.stdout, "hunter2")
			require.Contains(t, res.stdout, "postgres://azolla:xxxxx@db:5432/azolla?sslmode=disable")
		})
	}
}

func TestConfigRefusesBadInputWithUsageStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		file string // azolla.yaml content; "" for none
		env  map[string]string
		args []string
		want []string // substrings of stderr
	}{
		{name: "unknown keys in file are named",
			file: "colour: blue\nstore:\n  drivr: sqlite\n",
			want: []string{"unknown key(s): colour, store.drivr"}},
		{name: "invalid driver from file names the key",
			file: "store:\n  driver: mysql\n",
			want: []string{`store.driver: must be "sqlite" or "postgres", got "mysql"`}},
		{name: "invalid driver from env names the key",
			env:  map[string]string{"AZOLLA_STORE_DRIVER": "mysql"},
			want: []string{`store.driver: must be "sqlite" or "postgres", got "mysql"`}},
		{name: "several problems on one line",
			args: []string{"--store-driver", "postgres", "--log-level", "loud"},
			want: []string{`store.dsn: required when store.driver is "postgres"; log.level:`}},
		{name: "bad duration names the key",
			env:  map[string]string{"AZOLLA_CLAIM_LEASE_TTL": "soon"},
			want: []string{"azolla: decode configuration: 'claim.lease_ttl' time: invalid duration\n"}},
		{name: "section given as scalar",
			file: "store: sqlite\n",
			want: []string{"azolla: decode configuration: 'store'"}},
		{name: "malformed yaml",
			file: "log: [\n",
			want: []string{"read config file"}},
		{name: "missing explicit config file",
			args: []string{"--config", "/nonexistent/azolla.yaml"},
			want: []string{"config file:", "/nonexistent/azolla.yaml"}},
		{name: "unknown output format",
			args: []string{"--output", "toml"},
			want: []string{`--output must be "yaml" or "json", got "toml"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"config", "show"}, tt.args...)
			if tt.file != "" {
				args = append(args, "--config", writeFile(t, t.TempDir(), "azolla.yaml", tt.file))
			}
			res := azolla(t, tt.env, args...)
			require.Equal(t, 2, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
			require.Empty(t, res.stdout)
			require.Regexp(t, `^azolla: `, res.stderr)
			for _, w := range tt.want {
				require.Contains(t, res.stderr, w)
			}
		})
	}
}

func TestInvalidConfigDoesNotDumpUsage(t *testing.T) {
	t.Parallel()
	res := azolla(t, map[string]string{"AZOLLA_STORE_DRIVER": "mysql"}, "config", "show")
	require.Equal(t, 2, res.code)
	require.NotContains(t, res.stderr, "Usage:")
	require.Equal(t, 1, countLines(res.stderr), res.stderr)
}

func TestConfigShowReadsRepositorySettingsAndMasksPatchSecrets(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	writeFile(t, dataDir, "azolla.yaml", `patch:
  generator: openai
  openai:
    model: local-coder
  repositories:
    - repository: /srv/app
      gate_commands: ["go vet ./...", "go test ./..."]
      gate_budget: 90s
      push_remote: https://bot:s3cret@git.example.com/app.git
`)
	env := map[string]string{"AZOLLA_DATA_DIR": dataDir, "OPENAI_API_KEY": "sk-from-env"}
	cfg := showJSON(t, env)
	require.Equal(t, "openai", cfg.Patch.Generator)
	require.Len(t, cfg.Patch.Repositories, 1)
	r := cfg.Patch.Repositories[0]
	require.Equal(t, []string{"go vet ./...", "go test ./..."}, r.GateCommands)
	require.Equal(t, 90*time.Second, r.GateBudget)
	require.Equal(t, "https://bot:xxxxx@git.example.com/app.git", r.PushRemote)
	require.Equal(t, "xxxxx", cfg.Patch.OpenAI.APIKey, "the key from $OPENAI_API_KEY is masked")

	res := azolla(t, env, "config", "show")
	require.Equal(t, 0, res.code, res.stderr)
	require.NotContains(t, res.stdout, "s3cret")
	require.NotContains(t, res.stdout, "sk-from-env")

	writeFile(t, dataDir, "azolla.yaml", "patch:\n  repositories:\n    - repository: /srv/app\n      gate_comands: [make]\n")
	res = azolla(t, env, "config", "show")
	require.Equal(t, 2, res.code)
	require.Contains(t, res.stderr, "gate_comands")
}

func TestConfigListFromTheEnvironmentSplitsOnCommasAndSpaces(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"PATCH_DIAZOTROPH,COMMAND_DIAZOTROPH", "PATCH_DIAZOTROPH COMMAND_DIAZOTROPH", " PATCH_DIAZOTROPH, COMMAND_DIAZOTROPH "} {
		cfg := showJSON(t, map[string]string{"AZOLLA_CONTROL_PLANE_REMOTE_DIAZOTROPHS": v})
		require.Equal(t, []string{"PATCH_DIAZOTROPH", "COMMAND_DIAZOTROPH"}, cfg.ControlPlane.RemoteDiazotrophs, "from %q", v)
	}
	file := writeFile(t, t.TempDir(), "azolla.yaml", "control_plane:\n  remote_diazotrophs: [PATCH_DIAZOTROPH]\n")
	cfg := showJSON(t, nil, "--config", file)
	require.Equal(t, []string{"PATCH_DIAZOTROPH"}, cfg.ControlPlane.RemoteDiazotrophs)
}

func TestConfigShowReadsTasksSubstratesAndDeadlines(t *testing.T) {
	t.Parallel()
	file := writeFile(t, t.TempDir(), "azolla.yaml", `tasks:
  track: ops
  substrate: tickets
  statement_timeout: 2s
substrates:
  tickets:
    driver: postgres
    dsn: postgres://reader:s3cret@db:5432/tickets
  archive:
    driver: sqlite
    sqlite_path: /srv/archive/azolla.db
deadlines:
  interval: 30s
  sla:
    low: 336h
`)
	env := map[string]string{"AZOLLA_DEADLINES_SLA_CRITICAL": "1h"}
	cfg := showJSON(t, env, "--config", file)
	require.Equal(t, "ops", cfg.Tasks.Track)
	require.Equal(t, "tickets", cfg.Tasks.Substrate)
	require.Equal(t, 2*time.Second, cfg.Tasks.StatementTimeout)
	require.Equal(t, 50, cfg.Tasks.TriageMaxCaptures, "unset keys keep their defaults")
	require.Equal(t, map[string]config.SubstrateConfig{
		"tickets": {Driver: "postgres", DSN: "postgres://reader:xxxxx@db:5432/tickets"},
		"archive": {Driver: "sqlite", SQLitePath: "/srv/archive/azolla.db"},
	}, cfg.Substrates, "read back from config show --output json, the DSN masked")
	require.Equal(t, 30*time.Second, cfg.Deadlines.Interval)
	require.Equal(t, "azolla-deadlines", cfg.Deadlines.TaskQueue)
	require.Equal(t, config.SLAConfig{Critical: time.Hour, High: 24 * time.Hour, Normal: 72 * time.Hour, Low: 336 * time.Hour},
		cfg.Deadlines.SLA, "critical from the environment, low from the file")

	res := azolla(t, env, "config", "show", "--config", file)
	require.Equal(t, 0, res.code, res.stderr)
	require.NotContains(t, res.stdout, "s3cret")
}

func TestConfigRefusesBadTasksKeys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file string
		env        map[string]string
		want       string
	}{
		{name: "unknown key under tasks", file: "tasks:\n  trak: ops\n", want: "unknown key(s): tasks.trak"},
		{name: "unknown key under deadlines.sla", file: "deadlines:\n  sla:\n    urgent: 1h\n",
			want: "unknown key(s): deadlines.sla.urgent"},
		{name: "unknown key of a substrate", file: "substrates:\n  tickets:\n    driver: sqlite\n    path: /x.db\n",
			want: "path"},
		{name: "substrate not configured", file: "tasks:\n  substrate: tickets\n",
			want: `tasks.substrate: must be "local" or a key of substrates ([]), got "tickets"`},
		{name: "deadline queue from the environment", env: map[string]string{"AZOLLA_DEADLINES_TASK_QUEUE": "azolla-lifecycle"},
			want: "deadlines.task_queue: must be a task queue of its own"},
		{name: "SLA from the environment", env: map[string]string{"AZOLLA_DEADLINES_SLA_HIGH": "0s"},
			want: "deadlines.sla.high: must be a positive duration, got 0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := []string{"config", "show"}
			if tt.file != "" {
				args = append(args, "--config", writeFile(t, t.TempDir(), "azolla.yaml", tt.file))
			}
			res := azolla(t, tt.env, args...)
			require.Equal(t, exitUsage, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
			require.Contains(t, res.stderr, tt.want)
		})
	}
}

// TestConfigShowWritesEveryKeyInBothFormats guards against the two outputs
// drifting apart: each names the same keys, among them every key the
// configuration file takes, down to a repository's gate settings.
func TestConfigShowWritesEveryKeyInBothFormats(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	file := writeFile(t, t.TempDir(), "azolla.yaml", `
patch:
  repositories:
    - repository: `+repo+`
      gate_commands: ["go test ./..."]
      gate_budget: 2m
      gate_pass_env: [GOFLAGS]
      gate_env: {CGO_ENABLED: "0"}
      gate_network: none
`)
	keys := map[string][]string{}
	for _, format := range []string{"yaml", "json"} {
		res := azolla(t, nil, "config", "show", "--config", file, "--output", format)
		require.Equal(t, 0, res.code, res.stderr)
		var doc any
		require.NoError(t, yaml.Unmarshal([]byte(res.stdout), &doc), res.stdout) // JSON is YAML
		keys[format] = keyPaths("", doc)
	}
	require.Equal(t, keys["yaml"], keys["json"])
	for key := range flatten(config.Default()) {
		require.True(t, slices.ContainsFunc(keys["json"], func(k string) bool {
			return k == key || strings.HasPrefix(k, key+".") || strings.HasPrefix(k, key+"[]")
		}), "config show leaves out %s", key)
	}
	for _, key := range []string{"control_plane.client_ca_file", "patch.repositories[].gate_budget",
		"patch.repositories[].gate_env.CGO_ENABLED", "patch.repositories[].gate_secret_env", "patch.repositories[].gate_binds"} {
		require.Contains(t, keys["json"], key)
	}
}

// keyPaths lists the dotted paths of a decoded document's leaves and empty
// collections, sorted; list elements share the path "name[]".
func keyPaths(prefix string, doc any) []string {
	var out []string
	switch v := doc.(type) {
	case map[string]any:
		for k, child := range v {
			out = append(out, keyPaths(prefix+k+".", child)...)
		}
	case []any:
		for _, child := range v {
			out = append(out, keyPaths(strings.TrimSuffix(prefix, ".")+"[].", child)...)
		}
	}
	if len(out) == 0 {
		return []string{strings.TrimSuffix(prefix, ".")}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func TestConfigFileKeepsTheCaseOfEnvNames(t *testing.T) {
	t.Parallel()
	file := writeFile(t, t.TempDir(), "azolla.yaml", `
diazotroph:
  command:
    env: {GOFLAGS: -mod=mod, lower_case: "1"}
`)
	cfg := showJSON(t, nil, "--config", file)
	require.Equal(t, map[string]string{"GOFLAGS": "-mod=mod", "lower_case": "1"}, cfg.Diazotroph.Command.Env)

	// Substrate names are lower case; one spelled otherwise is refused by
	// name rather than folded into another.
	file = writeFile(t, t.TempDir(), "azolla.yaml", "substrates:\n  Tickets: {driver: sqlite, sqlite_path: /srv/t.db}\n")
	res := azolla(t, nil, "config", "show", "--config", file)
	require.Equal(t, 2, res.code)
	require.Contains(t, res.stderr, `substrates: name "Tickets"`)
}
