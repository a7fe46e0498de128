package config

import (
	"cmp"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/azolla/azolla/internal/executor/diazotroph/triage"
)

// TasksConfig configures the task-management azolla (docs/protocol/tasks.md): its track
// of triage and manifest runs, and the substrate its manifests read.
type TasksConfig struct {
	// Track names the track (its TrackWorkflow is track-<name>).
	Track string `mapstructure:"track" json:"track" yaml:"track"`
	// TriageMaxCaptures and TriageMaxBytes bound one triage round; the
	// captures left wait for the next.
	TriageMaxCaptures int `mapstructure:"triage_max_captures" json:"triage_max_captures" yaml:"triage_max_captures"`
	TriageMaxBytes    int `mapstructure:"triage_max_bytes" json:"triage_max_bytes" yaml:"triage_max_bytes"`
	// Budget is each triage and manifest workorder's budget.
	Budget time.Duration `mapstructure:"budget" json:"budget" yaml:"budget"`
	// Substrate names what the manifest reads: LocalSubstrate (this
	// azolla's own store) or a key of substrates.
	Substrate string `mapstructure:"substrate" json:"substrate" yaml:"substrate"`
	// StatementTimeout and RowCap bound each substrate query.
	StatementTimeout time.Duration `mapstructure:"statement_timeout" json:"statement_timeout" yaml:"statement_timeout"`
	RowCap           int           `mapstructure:"row_cap" json:"row_cap" yaml:"row_cap"`
	// Triage chooses how a triage round is made (docs/task-management.md).
	Triage TriageConfig `mapstructure:"triage" json:"triage" yaml:"triage"`
}

// TriageConfig is tasks.triage: the route of TRIAGE_DIAZOTROPH's rounds.
type TriageConfig struct {
	// Generator is builtin (the deterministic rules), command or openai
	// (a model).
	Generator string `mapstructure:"generator" json:"generator" yaml:"generator"`
	// MaxFailures is how many rounds in a row may fail their gate on a
	// model route before a round uses the built-in rules.
	MaxFailures int `mapstructure:"max_failures" json:"max_failures" yaml:"max_failures"`
	// Command is the command route's shell command line; it runs with
	// patch.command's executor settings.
	Command TriageCommandConfig `mapstructure:"command" json:"command" yaml:"command"`
	// OpenAI is the openai route: patch.openai's endpoint, key and limits,
	// with a model of its own when set.
	OpenAI TriageOpenAIConfig `mapstructure:"openai" json:"openai" yaml:"openai"`
}

// TriageCommandConfig is tasks.triage.command.
type TriageCommandConfig struct {
	// Run is run by /bin/sh -c; the input document is on its stdin and in
	// $AZOLLA_INPUT_FILE, and it prints the proposals' JSON on stdout.
	Run string `mapstructure:"run" json:"run" yaml:"run"`
}

// TriageOpenAIConfig is tasks.triage.openai.
type TriageOpenAIConfig struct {
	// Model, when set, is asked instead of patch.openai.model.
	Model string `mapstructure:"model" json:"model" yaml:"model"`
}

// Triage generators (tasks.triage.generator): the routes of package triage.
const (
	TriageBuiltin = triage.RouteBuiltin
	TriageCommand = triage.RouteCommand
	TriageOpenAI  = triage.RouteOpenAI
)

// DefaultTriageMaxFailures is tasks.triage.max_failures by default.
const DefaultTriageMaxFailures = triage.DefaultMaxFailures

// TriageModel is the model the openai triage route asks.
func (c Config) TriageModel() string {
	return cmp.Or(c.Tasks.Triage.OpenAI.Model, c.Patch.OpenAI.Model)
}

// LocalSubstrate is the substrate name of this azolla's own store.
const LocalSubstrate = "local"

// SubstrateConfig is another azolla's store, read by the manifest's
// substrate queries: substrates.<name>.driver and .dsn (PostgreSQL) or
// .sqlite_path.
type SubstrateConfig struct {
	Driver     string `mapstructure:"driver" json:"driver" yaml:"driver"`
	DSN        string `mapstructure:"dsn" json:"dsn" yaml:"dsn"`
	SQLitePath string `mapstructure:"sqlite_path" json:"sqlite_path" yaml:"sqlite_path"`
}

// DeadlinesConfig configures the deadline monitor (track C).
type DeadlinesConfig struct {
	// Interval is how often the monitor's Temporal Schedule runs it.
	Interval time.Duration `mapstructure:"interval" json:"interval" yaml:"interval"`
	// TaskQueue is the monitor's own task queue.
	TaskQueue string `mapstructure:"task_queue" json:"task_queue" yaml:"task_queue"`
	// SLA is how long an objective without a due date may take from its
	// creation, by urgency.
	SLA SLAConfig `mapstructure:"sla" json:"sla" yaml:"sla"`
}

// SLAConfig is the time allowed per urgency.
type SLAConfig struct {
	Critical time.Duration `mapstructure:"critical" json:"critical" yaml:"critical"`
	High     time.Duration `mapstructure:"high" json:"high" yaml:"high"`
	Normal   time.Duration `mapstructure:"normal" json:"normal" yaml:"normal"`
	Low      time.Duration `mapstructure:"low" json:"low" yaml:"low"`
}

// Map returns the SLA keyed by urgency (CRITICAL, HIGH, NORMAL, LOW).
func (s SLAConfig) Map() map[string]time.Duration {
	return map[string]time.Duration{"CRITICAL": s.Critical, "HIGH": s.High, "NORMAL": s.Normal, "LOW": s.Low}
}

// Task-management defaults.
const (
	DefaultTrack             = "default"
	DefaultDeadlineTaskQueue = "azolla-deadlines"
)

// DefaultDeadlineInterval is how often the deadline monitor runs by
// default: fine against the shortest default SLA (an hour), and 288 passes
// a day in the Web UI's list rather than a minute's 1,440.
const DefaultDeadlineInterval = 5 * time.Minute

func defaultTasks() TasksConfig {
	return TasksConfig{Track: DefaultTrack, TriageMaxCaptures: 50, TriageMaxBytes: 256 << 10, Budget: time.Minute,
		Substrate: LocalSubstrate, StatementTimeout: 5 * time.Second, RowCap: 500,
		Triage: TriageConfig{Generator: TriageBuiltin, MaxFailures: DefaultTriageMaxFailures}}
}

func defaultDeadlines() DeadlinesConfig {
	return DeadlinesConfig{Interval: DefaultDeadlineInterval, TaskQueue: DefaultDeadlineTaskQueue,
		SLA: SLAConfig{Critical: 4 * time.Hour, High: 24 * time.Hour, Normal: 72 * time.Hour, Low: 168 * time.Hour}}
}

// trackName is compiled on first use, not at start: its counted repetition
// makes a program of about 50 KB that commands which never validate a
// configuration (azolla version) would build for nothing.
var trackName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)
})

func (c Config) validateTasks(add func(key, format string, args ...any)) {
	t := c.Tasks
	if !trackName().MatchString(t.Track) {
		add("tasks.track", "must be 1-64 of a-z, 0-9, '_' and '-', starting with a letter or digit, got %q", t.Track)
	}
	if t.TriageMaxCaptures < 1 {
		add("tasks.triage_max_captures", "must be at least 1, got %d", t.TriageMaxCaptures)
	}
	if t.TriageMaxBytes < 1<<10 {
		add("tasks.triage_max_bytes", "must be at least 1024, got %d", t.TriageMaxBytes)
	}
	if b := t.Budget; b < MinBudget || b > MaxBudget {
		add("tasks.budget", "must be a duration between %s and %s, got %s", MinBudget, MaxBudget, b)
	}
	if _, ok := c.Substrates[t.Substrate]; !ok && t.Substrate != LocalSubstrate {
		add("tasks.substrate", "must be %q or a key of substrates (%v), got %q", LocalSubstrate, c.substrateNames(), t.Substrate)
	}
	if d := t.StatementTimeout; d < 10*time.Millisecond || d > 10*time.Minute {
		add("tasks.statement_timeout", "must be a duration between 10ms and 10m, got %s", d)
	}
	if t.RowCap < 1 || t.RowCap > 100_000 {
		add("tasks.row_cap", "must be between 1 and 100000, got %d", t.RowCap)
	}
	c.validateTriage(add)
	for _, name := range c.substrateNames() {
		s, key := c.Substrates[name], "substrates."+name
		if name == LocalSubstrate {
			add(key, "%q is this azolla's own store and cannot be configured", LocalSubstrate)
		}
		// The name is frozen into every manifest snapshot that reads it.
		if !trackName().MatchString(name) {
			add("substrates", "name %q must be 1-64 of a-z, 0-9, '_' and '-', starting with a letter or digit", name)
		}
		switch s.Driver {
		case DriverPostgres:
			if s.DSN == "" {
				add(key+".dsn", "required when %s.driver is %q", key, DriverPostgres)
			} else if msg := checkDSN(s.DSN); msg != "" {
				add(key+".dsn", "%s", msg)
			}
			if s.SQLitePath != "" {
				add(key+".sqlite_path", "is set but %s.driver is %q", key, DriverPostgres)
			}
		case DriverSQLite:
			if s.SQLitePath == "" {
				add(key+".sqlite_path", "must name the SQLite file of the substrate")
			}
			if s.DSN != "" {
				add(key+".dsn", "is set but %s.driver is %q", key, DriverSQLite)
			}
		default:
			add(key+".driver", "must be %q or %q, got %q", DriverSQLite, DriverPostgres, s.Driver)
		}
	}
	d := c.Deadlines
	if d.Interval < time.Second {
		add("deadlines.interval", "must be at least 1s, got %s", d.Interval)
	}
	if d.TaskQueue == "" || d.TaskQueue == c.Temporal.TaskQueue {
		add("deadlines.task_queue", "must be a task queue of its own (not temporal.task_queue), got %q", d.TaskQueue)
	}
	for _, u := range []struct {
		key string
		v   time.Duration
	}{{"critical", d.SLA.Critical}, {"high", d.SLA.High}, {"normal", d.SLA.Normal}, {"low", d.SLA.Low}} {
		if u.v <= 0 {
			add("deadlines.sla."+u.key, "must be a positive duration, got %s", u.v)
		}
	}
}

func (c Config) validateTriage(add func(key, format string, args ...any)) {
	tr := c.Tasks.Triage
	switch tr.Generator {
	case TriageBuiltin:
	case TriageCommand:
		if strings.TrimSpace(tr.Command.Run) == "" {
			add("tasks.triage.command.run", "must be set when tasks.triage.generator is %q", TriageCommand)
		}
	case TriageOpenAI:
		if c.TriageModel() == "" {
			add("tasks.triage.openai.model", "must be set, or patch.openai.model, when tasks.triage.generator is %q", TriageOpenAI)
		}
	default:
		add("tasks.triage.generator", "must be one of %v, got %q", []string{TriageBuiltin, TriageCommand, TriageOpenAI}, tr.Generator)
	}
	if tr.MaxFailures < 1 || tr.MaxFailures > 100 {
		add("tasks.triage.max_failures", "must be between 1 and 100, got %d", tr.MaxFailures)
	}
}

func (c Config) substrateNames() []string {
	names := make([]string, 0, len(c.Substrates))
	for n := range c.Substrates {
		names = append(names, n)
	}
	sort.Strings(names)
	return slices.Clip(names)
}
