package config_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
)

func TestDefaultTasksAndDeadlines(t *testing.T) {
	t.Parallel()
	c := valid()
	require.Equal(t, "default", c.Tasks.Track)
	require.Equal(t, config.LocalSubstrate, c.Tasks.Substrate, "the manifest reads this azolla's own store")
	require.Empty(t, c.Substrates)
	require.Equal(t, 5*time.Minute, c.Deadlines.Interval)
	require.Equal(t, "azolla-deadlines", c.Deadlines.TaskQueue)
	require.NotEqual(t, c.Temporal.TaskQueue, c.Deadlines.TaskQueue)
	require.Equal(t, map[string]time.Duration{"CRITICAL": 4 * time.Hour, "HIGH": 24 * time.Hour,
		"NORMAL": 72 * time.Hour, "LOW": 168 * time.Hour}, c.Deadlines.SLA.Map())
}

func TestValidateTasksNamesTheKey(t *testing.T) {
	t.Parallel()
	pg := func(dsn string) config.SubstrateConfig { return config.SubstrateConfig{Driver: "postgres", DSN: dsn} }
	tests := []struct {
		name   string
		mutate func(*config.Config)
		want   string
	}{
		{"upper-case track", func(c *config.Config) { c.Tasks.Track = "Inbox" }, `tasks.track: must be 1-64 of a-z`},
		{"track with a slash", func(c *config.Config) { c.Tasks.Track = "a/b" }, `got "a/b"`},
		{"empty track", func(c *config.Config) { c.Tasks.Track = "" }, `tasks.track: must be`},
		{"track too long", func(c *config.Config) { c.Tasks.Track = strings.Repeat("t", 65) }, `tasks.track: must be`},
		{"no captures per triage", func(c *config.Config) { c.Tasks.TriageMaxCaptures = 0 },
			`tasks.triage_max_captures: must be at least 1, got 0`},
		{"triage bytes", func(c *config.Config) { c.Tasks.TriageMaxBytes = 10 }, `tasks.triage_max_bytes: must be at least 1024`},
		{"budget", func(c *config.Config) { c.Tasks.Budget = 0 }, `tasks.budget: must be a duration between`},
		{"statement timeout", func(c *config.Config) { c.Tasks.StatementTimeout = time.Hour },
			`tasks.statement_timeout: must be a duration between 10ms and 10m`},
		{"row cap", func(c *config.Config) { c.Tasks.RowCap = 0 }, `tasks.row_cap: must be between 1 and 100000, got 0`},
		{"missing substrate", func(c *config.Config) { c.Tasks.Substrate = "tickets" },
			`tasks.substrate: must be "local" or a key of substrates ([]), got "tickets"`},
		{"substrate with a bad driver", func(c *config.Config) {
			c.Substrates = map[string]config.SubstrateConfig{"x": {Driver: "mysql"}}
		}, `substrates.x.driver: must be "sqlite" or "postgres", got "mysql"`},
		{"postgres substrate without DSN", func(c *config.Config) {
			c.Substrates = map[string]config.SubstrateConfig{"x": pg("")}
		}, `substrates.x.dsn: required when substrates.x.driver is "postgres"`},
		{"postgres substrate with a bad DSN", func(c *config.Config) {
			c.Substrates = map[string]config.SubstrateConfig{"x": pg("mysql://u:p@h/db")}
		}, `substrates.x.dsn: URL scheme must be postgres or postgresql, got "mysql"`},
		{"sqlite substrate without path", func(c *config.Config) {
			c.Substrates = map[string]config.SubstrateConfig{"x": {Driver: "sqlite"}}
		}, `substrates.x.sqlite_path: must name the SQLite file of the substrate`},
		{"postgres substrate with a SQLite path", func(c *config.Config) {
			c.Substrates = map[string]config.SubstrateConfig{"x": {Driver: "postgres", DSN: "postgres://h/db", SQLitePath: "/x.db"}}
		}, `substrates.x.sqlite_path: is set but substrates.x.driver is "postgres"`},
		{"sqlite substrate with a DSN", func(c *config.Config) {
			c.Substrates = map[string]config.SubstrateConfig{"x": {Driver: "sqlite", SQLitePath: "/x.db", DSN: "postgres://h/db"}}
		}, `substrates.x.dsn: is set but substrates.x.driver is "sqlite"`},
		{"a substrate name that is not one line", func(c *config.Config) {
			c.Substrates = map[string]config.SubstrateConfig{"a\x1bb": {Driver: "sqlite", SQLitePath: "/x.db"}}
		}, `substrates: name "a\x1bb" must be 1-64 of a-z`},
		{"a substrate name too long", func(c *config.Config) {
			c.Substrates = map[string]config.SubstrateConfig{strings.Repeat("n", 65): {Driver: "sqlite", SQLitePath: "/x.db"}}
		}, `substrates: name "nnn`},
		{"a substrate named local", func(c *config.Config) {
			c.Substrates = map[string]config.SubstrateConfig{"local": pg("postgres://h/db")}
		}, `substrates.local: "local" is this azolla's own store and cannot be configured`},
		{"deadline interval", func(c *config.Config) { c.Deadlines.Interval = time.Millisecond },
			`deadlines.interval: must be at least 1s, got 1ms`},
		{"deadline queue is the lifecycle queue", func(c *config.Config) { c.Deadlines.TaskQueue = c.Temporal.TaskQueue },
			`deadlines.task_queue: must be a task queue of its own (not temporal.task_queue)`},
		{"no deadline queue", func(c *config.Config) { c.Deadlines.TaskQueue = "" }, `deadlines.task_queue: must be`},
		{"zero critical SLA", func(c *config.Config) { c.Deadlines.SLA.Critical = 0 },
			`deadlines.sla.critical: must be a positive duration, got 0s`},
		{"negative low SLA", func(c *config.Config) { c.Deadlines.SLA.Low = -time.Hour },
			`deadlines.sla.low: must be a positive duration, got -1h0m0s`},
		{"unknown triage generator", func(c *config.Config) { c.Tasks.Triage.Generator = "llm" },
			`tasks.triage.generator: must be one of [builtin command openai], got "llm"`},
		{"triage command without a command line", func(c *config.Config) { c.Tasks.Triage.Generator = "command" },
			`tasks.triage.command.run: must be set when tasks.triage.generator is "command"`},
		{"triage openai without a model", func(c *config.Config) { c.Tasks.Triage.Generator = "openai" },
			`tasks.triage.openai.model: must be set, or patch.openai.model, when tasks.triage.generator is "openai"`},
		{"triage max failures zero", func(c *config.Config) { c.Tasks.Triage.MaxFailures = 0 },
			`tasks.triage.max_failures: must be between 1 and 100, got 0`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := valid()
			tt.mutate(&c)
			err := c.Validate()
			require.Error(t, err)
			require.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestTriageRoutes(t *testing.T) {
	t.Parallel()
	c := valid()
	require.Equal(t, config.TriageBuiltin, c.Tasks.Triage.Generator, "the built-in rules by default")
	require.Equal(t, 3, c.Tasks.Triage.MaxFailures)

	c.Tasks.Triage.Generator, c.Tasks.Triage.Command.Run = config.TriageCommand, "./triage.sh"
	require.NoError(t, c.Validate())

	c.Tasks.Triage.Generator, c.Patch.OpenAI.Model = config.TriageOpenAI, "gpt-patch"
	require.NoError(t, c.Validate(), "patch.openai's model stands in")
	require.Equal(t, "gpt-patch", c.TriageModel())
	c.Tasks.Triage.OpenAI.Model = "gpt-triage"
	require.Equal(t, "gpt-triage", c.TriageModel())
}

func TestValidateTasksAcceptsConfiguredSubstrates(t *testing.T) {
	t.Parallel()
	c := valid()
	c.Substrates = map[string]config.SubstrateConfig{
		"tickets": {Driver: "postgres", DSN: "postgres://u:p@db/tickets"},
		"old":     {Driver: "sqlite", SQLitePath: "/srv/old/azolla.db"},
	}
	c.Tasks.Substrate, c.Tasks.Track = "tickets", "ops_2"
	require.NoError(t, c.Validate())
	c.Tasks.Substrate = "old"
	require.NoError(t, c.Validate())
}

func TestValidateNeverEchoesASubstrateDSN(t *testing.T) {
	t.Parallel()
	c := valid()
	c.Substrates = map[string]config.SubstrateConfig{"x": {Driver: "postgres", DSN: "postgres://u:s3cret/x@db/azolla"}}
	err := c.Validate()
	require.ErrorContains(t, err, "substrates.x.dsn:")
	require.NotContains(t, err.Error(), "s3cret")
}

func TestMaskedHidesSubstrateDSNPasswords(t *testing.T) {
	t.Parallel()
	c := valid()
	c.Substrates = map[string]config.SubstrateConfig{
		"tickets": {Driver: "postgres", DSN: "postgres://reader:s3cret@db:5432/tickets?sslmode=disable"},
		"kv":      {Driver: "postgres", DSN: "host=db user=u password=hunter2"},
		"old":     {Driver: "sqlite", SQLitePath: "/srv/old.db"},
	}
	m := c.Masked()
	require.Equal(t, "postgres://reader:xxxxx@db:5432/tickets?sslmode=disable", m.Substrates["tickets"].DSN)
	require.Equal(t, "host=db user=u password=xxxxx", m.Substrates["kv"].DSN)
	require.Equal(t, c.Substrates["old"], m.Substrates["old"])
	require.Equal(t, "postgres://reader:s3cret@db:5432/tickets?sslmode=disable", c.Substrates["tickets"].DSN,
		"the original map is untouched")
}

func TestTasksAndDeadlinesJSONRoundTrip(t *testing.T) {
	t.Parallel()
	c := valid()
	c.Tasks.Budget, c.Tasks.StatementTimeout, c.Tasks.Track = 90*time.Second, 250*time.Millisecond, "ops"
	c.Deadlines.Interval, c.Deadlines.SLA.Critical, c.Deadlines.SLA.Low = 30*time.Second, time.Hour, 336*time.Hour
	c.Substrates = map[string]config.SubstrateConfig{"tickets": {Driver: "postgres", DSN: "postgres://db/t"}}
	data, err := json.Marshal(c)
	require.NoError(t, err)
	var fields struct {
		Tasks     map[string]any `json:"tasks"`
		Deadlines map[string]any `json:"deadlines"`
	}
	require.NoError(t, json.Unmarshal(data, &fields))
	require.Equal(t, "1m30s", fields.Tasks["budget"])
	require.Equal(t, "250ms", fields.Tasks["statement_timeout"])
	require.Equal(t, "30s", fields.Deadlines["interval"])
	require.Equal(t, map[string]any{"critical": "1h0m0s", "high": "24h0m0s", "normal": "72h0m0s", "low": "336h0m0s"},
		fields.Deadlines["sla"])

	var back config.Config
	require.NoError(t, json.Unmarshal(data, &back))
	require.Equal(t, c.Tasks, back.Tasks)
	require.Equal(t, c.Deadlines, back.Deadlines)
	require.Equal(t, c.Substrates, back.Substrates)

	require.ErrorContains(t, json.Unmarshal([]byte(`{"deadlines":{"sla":{"critical":"soon"}}}`), &back), "soon")
}
