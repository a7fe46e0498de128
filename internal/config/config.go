// Package config is azolla's typed configuration: its defaults, validation,
// secret masking and the logger it describes. Loading (files, environment,
// flags) belongs to the command line; this package never reads a source.
package config

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/executor/patchgen"
	"github.com/azolla/azolla/internal/remote/controlplane"
)

// Config is the whole configuration. The mapstructure keys are the keys of
// azolla.yaml and, upper-cased with "." -> "_" and an AZOLLA_ prefix, of the
// environment.
type Config struct {
	// DataDir holds azolla's local state (the SQLite database by default).
	DataDir string      `mapstructure:"data_dir" json:"data_dir" yaml:"data_dir"`
	Store   StoreConfig `mapstructure:"store" json:"store" yaml:"store"`
	Claim   ClaimConfig `mapstructure:"claim" json:"claim" yaml:"claim"`
	Log     LogConfig   `mapstructure:"log" json:"log" yaml:"log"`
	// Temporal addresses the cluster that `azolla worker` and the client
	// commands talk to; `azolla dev` points it at its embedded server.
	Temporal   TemporalConfig   `mapstructure:"temporal" json:"temporal" yaml:"temporal"`
	Dev        DevConfig        `mapstructure:"dev" json:"dev" yaml:"dev"`
	Lifecycle  LifecycleConfig  `mapstructure:"lifecycle" json:"lifecycle" yaml:"lifecycle"`
	Diazotroph DiazotrophConfig `mapstructure:"diazotroph" json:"diazotroph" yaml:"diazotroph"`
	// Patch configures PATCH_DIAZOTROPH, which runs every objective that
	// names a repository.
	Patch PatchConfig `mapstructure:"patch" json:"patch" yaml:"patch"`
	// ControlPlane configures the control plane (docs/protocol/control-plane.md): the HTTP server
	// remote workers pull jobs from, its transport and its policy, and which
	// diazotrophs run remotely.
	ControlPlane ControlPlaneConfig `mapstructure:"control_plane" json:"control_plane" yaml:"control_plane"`
	// Tasks configures the task-management azolla (docs/protocol/tasks.md): its track
	// and what its manifests read.
	Tasks TasksConfig `mapstructure:"tasks" json:"tasks" yaml:"tasks"`
	// Substrates are other azollas' stores the manifest may read, by name
	// (substrates.<name>.driver, .dsn, .sqlite_path).
	Substrates map[string]SubstrateConfig `mapstructure:"substrates" json:"substrates" yaml:"substrates"`
	// Deadlines configures the deadline monitor.
	Deadlines DeadlinesConfig `mapstructure:"deadlines" json:"deadlines" yaml:"deadlines"`
	// Ops configures `azolla worker`'s operations listener; the control
	// plane serves the same endpoints on control_plane.address.
	Ops OpsConfig `mapstructure:"ops" json:"ops" yaml:"ops"`
	// Executor says how processes run for work (agents, commands, gate
	// commands) are confined and limited.
	Executor ExecutorConfig `mapstructure:"executor" json:"executor" yaml:"executor"`
	// Worker configures what one `azolla worker` (or `azolla dev`) takes
	// on at once.
	Worker WorkerConfig `mapstructure:"worker" json:"worker" yaml:"worker"`
}

// WorkerConfig is what one worker process takes on at once.
type WorkerConfig struct {
	// MaxRuns is how many runs (agent runs, candidates, gate commands)
	// the worker executes at once, on the lifecycle's run task queue
	// (workflows.RunTaskQueue); the lifecycle's light steps are not
	// counted. 0 is the machine's CPU count.
	MaxRuns int `mapstructure:"max_runs" json:"max_runs" yaml:"max_runs"`
}

// Runs is how many runs a worker of w executes at once.
func (w WorkerConfig) Runs() int {
	if w.MaxRuns > 0 {
		return w.MaxRuns
	}
	return runtime.NumCPU()
}

// OpsConfig configures the operations listener of `azolla worker`:
// /healthz, /readyz and /metrics.
type OpsConfig struct {
	// Address is host:port to serve on; "" serves nothing. On the default,
	// loopback address a second worker on the same host finds the port
	// taken and runs without it (logged); an address set explicitly that
	// cannot be listened on stops the worker.
	Address string `mapstructure:"address" json:"address" yaml:"address"`
	// Pprof also serves the Go runtime's profiles under /debug/pprof/ on
	// Address, for finding where a process's CPU and memory go. Off by
	// default; keep Address on loopback when it is on.
	Pprof bool `mapstructure:"pprof" json:"pprof" yaml:"pprof"`
	// IntakeSecretEnv names the variable holding the secret that signs
	// documents POSTed to /intake on Address (docs/forge.md#other-trackers);
	// unset, /intake is not served.
	IntakeSecretEnv string `mapstructure:"intake_secret_env" json:"intake_secret_env" yaml:"intake_secret_env"`
}

// IntakeSecret is the /intake secret from the process's environment; ""
// when none is configured or set.
func (o OpsConfig) IntakeSecret(getenv func(string) string) string {
	if o.IntakeSecretEnv == "" {
		return ""
	}
	return strings.TrimSpace(getenv(o.IntakeSecretEnv))
}

// DefaultOpsAddress is ops.address by default: loopback, so a container's
// own health check reaches it and nothing outside does.
const DefaultOpsAddress = "127.0.0.1:7360"

// ControlPlaneConfig configures `azolla control-plane` (and the control
// plane `azolla dev` embeds) and routes diazotrophs to remote workers.
type ControlPlaneConfig struct {
	// Address is host:port the HTTP server listens on.
	Address string `mapstructure:"address" json:"address" yaml:"address"`
	// CertFile and KeyFile, set together, serve HTTPS.
	CertFile string `mapstructure:"cert_file" json:"cert_file" yaml:"cert_file"`
	KeyFile  string `mapstructure:"key_file" json:"key_file" yaml:"key_file"`
	// ClientCAFile, with CertFile, requires every remote worker to present
	// a client certificate signed by a CA in it (mTLS), on top of its token.
	ClientCAFile string `mapstructure:"client_ca_file" json:"client_ca_file" yaml:"client_ca_file"`
	// RedisURL (redis://[user:password@]host:port/db) selects the Redis
	// Streams transport; "" uses the database transport. Secret: print it
	// only via Masked.
	RedisURL string `mapstructure:"redis_url" json:"redis_url" yaml:"redis_url"`
	// LeaseTTL is how long a remote worker's lease lives without a
	// heartbeat; HeartbeatInterval is how often workers are told to send
	// one.
	LeaseTTL          time.Duration `mapstructure:"lease_ttl" json:"lease_ttl" yaml:"lease_ttl"`
	HeartbeatInterval time.Duration `mapstructure:"heartbeat_interval" json:"heartbeat_interval" yaml:"heartbeat_interval"`
	// MaxAttempts bounds a job's attempts before it is dead-lettered.
	MaxAttempts int `mapstructure:"max_attempts" json:"max_attempts" yaml:"max_attempts"`
	// ReaperInterval is how often the reaper looks for expired leases and
	// lost messages.
	ReaperInterval time.Duration `mapstructure:"reaper_interval" json:"reaper_interval" yaml:"reaper_interval"`
	// MaxWait caps a claim's long poll (at most 30s).
	MaxWait time.Duration `mapstructure:"max_wait" json:"max_wait" yaml:"max_wait"`
	// RemoteDiazotrophs lists the diazotroph types whose workorders run on
	// remote workers instead of inside `azolla worker`.
	RemoteDiazotrophs []string `mapstructure:"remote_diazotrophs" json:"remote_diazotrophs" yaml:"remote_diazotrophs"`
}

// Control plane defaults and bounds.
const (
	DefaultControlPlaneAddress = "127.0.0.1:7350"
	// MaxControlPlaneWait is the protocol's cap on a claim's long poll.
	MaxControlPlaneWait = controlplane.MaxClaimWait
)

// TemporalConfig is the client side of a Temporal cluster.
type TemporalConfig struct {
	// Address is host:port of the frontend.
	Address   string `mapstructure:"address" json:"address" yaml:"address"`
	Namespace string `mapstructure:"namespace" json:"namespace" yaml:"namespace"`
	// TaskQueue is where lifecycle workflows and activities are polled.
	TaskQueue string `mapstructure:"task_queue" json:"task_queue" yaml:"task_queue"`
	// APIKey is sent as a bearer token (Temporal Cloud API keys). Secret:
	// print it only via Masked.
	APIKey string    `mapstructure:"api_key" json:"api_key" yaml:"api_key"`
	TLS    TLSConfig `mapstructure:"tls" json:"tls" yaml:"tls"`
}

// TLSConfig enables TLS to the frontend, with an optional client certificate
// (mTLS) and CA. Setting a file or ServerName turns TLS on, and so does an
// API key unless Disabled says otherwise.
type TLSConfig struct {
	Enabled bool `mapstructure:"enabled" json:"enabled" yaml:"enabled"`
	// Disabled keeps the connection plaintext even with an API key, which
	// then travels in clear: for a frontend behind a TLS-terminating proxy
	// on the same host, never across a network.
	Disabled   bool   `mapstructure:"disabled" json:"disabled" yaml:"disabled"`
	CertFile   string `mapstructure:"cert_file" json:"cert_file" yaml:"cert_file"`
	KeyFile    string `mapstructure:"key_file" json:"key_file" yaml:"key_file"`
	CAFile     string `mapstructure:"ca_file" json:"ca_file" yaml:"ca_file"`
	ServerName string `mapstructure:"server_name" json:"server_name" yaml:"server_name"`
}

// On reports whether TLS is configured explicitly (an API key turns it on
// too; see TemporalConfig.UsesTLS).
func (t TLSConfig) On() bool {
	return t.Enabled || t.CertFile != "" || t.KeyFile != "" || t.CAFile != "" || t.ServerName != ""
}

// UsesTLS reports whether the connection to the frontend is TLS: when
// configured, or when an API key is set and TLS is not disabled.
func (t TemporalConfig) UsesTLS() bool {
	return !t.TLS.Disabled && (t.TLS.On() || t.APIKey != "")
}

// DevConfig shapes the embedded Temporal server of `azolla dev`.
type DevConfig struct {
	// Host is the interface both ports listen on.
	Host     string `mapstructure:"host" json:"host" yaml:"host"`
	GRPCPort int    `mapstructure:"grpc_port" json:"grpc_port" yaml:"grpc_port"`
	UIPort   int    `mapstructure:"ui_port" json:"ui_port" yaml:"ui_port"`
	// Ephemeral keeps Temporal's state in memory; by default it is the
	// SQLite file TemporalDBPath, so workflows survive a restart.
	Ephemeral bool `mapstructure:"ephemeral" json:"ephemeral" yaml:"ephemeral"`
	// DBPath overrides <data_dir>/temporal.db.
	DBPath string `mapstructure:"db_path" json:"db_path" yaml:"db_path"`
}

// LifecycleConfig tunes the objective lifecycle.
type LifecycleConfig struct {
	// Diazotroph is the diazotroph_type the scheduler writes into the
	// workorders of objectives that name no repository; those that do are
	// PATCH_DIAZOTROPH's.
	Diazotroph string `mapstructure:"diazotroph" json:"diazotroph" yaml:"diazotroph"`
	// Budget becomes each workorder's budget_ms.
	Budget time.Duration `mapstructure:"budget" json:"budget" yaml:"budget"`
	// PollInterval is how often the polling bridge scans the store.
	PollInterval time.Duration `mapstructure:"poll_interval" json:"poll_interval" yaml:"poll_interval"`
	// MaxConcurrentRuns bounds the runs (agent runs and candidates) the
	// whole deployment has at once, across every worker, local and remote,
	// each holding a run slot claim (docs/production.md#limits). 0: no
	// bound but the workers' own (worker.max_runs).
	MaxConcurrentRuns int `mapstructure:"max_concurrent_runs" json:"max_concurrent_runs" yaml:"max_concurrent_runs"`
}

// DiazotrophConfig configures the built-in diazotrophs.
type DiazotrophConfig struct {
	Command CommandConfig `mapstructure:"command" json:"command" yaml:"command"`
}

// CommandConfig configures COMMAND_DIAZOTROPH.
type CommandConfig struct {
	// Run is a shell command line (run by /bin/sh -c) given the snapshot
	// prompt on stdin; its stdout becomes the output bundle's content.
	Run string `mapstructure:"run" json:"run" yaml:"run"`
	// Dir is its working directory; "" means <data_dir>/work.
	Dir       string `mapstructure:"dir" json:"dir" yaml:"dir"`
	RunConfig `mapstructure:",squash" yaml:",inline"`
}

// PatchConfig configures PATCH_DIAZOTROPH: where it keeps its git state,
// which generator writes the patch, what a patch may contain, who commits it
// and what each repository's gate runs.
type PatchConfig struct {
	// Generator is the patch generator of objectives that choose none:
	// "static" (the patch supplied with the objective), "command" or
	// "openai".
	Generator string `mapstructure:"generator" json:"generator" yaml:"generator"`
	// GitDir holds the repository mirrors and one workspace per workorder;
	// "" means <data_dir>/git.
	GitDir string       `mapstructure:"git_dir" json:"git_dir" yaml:"git_dir"`
	Author AuthorConfig `mapstructure:"author" json:"author" yaml:"author"`
	// AllowBinary lets patches carry binary files.
	AllowBinary bool `mapstructure:"allow_binary" json:"allow_binary" yaml:"allow_binary"`
	// EarlyStop: of an objective's several candidates, the first that
	// passes every gate command cancels the others.
	EarlyStop bool `mapstructure:"early_stop" json:"early_stop" yaml:"early_stop"`
	// EarlyStopMaxDiffLines, above 0, is the largest diff (in changed
	// lines) of a passing candidate that stops the others: a larger one
	// lets them finish, since one of them may pass with less.
	EarlyStopMaxDiffLines int `mapstructure:"early_stop_max_diff_lines" json:"early_stop_max_diff_lines" yaml:"early_stop_max_diff_lines"`
	// ParallelCandidates, above 0, is how many of a workorder's candidates
	// run at a time; the next starts as one finishes, after the budget
	// check. 0 starts them all at once.
	ParallelCandidates int `mapstructure:"parallel_candidates" json:"parallel_candidates" yaml:"parallel_candidates"`
	// MaxPatchBytes bounds a candidate patch.
	MaxPatchBytes int `mapstructure:"max_patch_bytes" json:"max_patch_bytes" yaml:"max_patch_bytes"`
	// Resume is where a round starts when the round before left partial
	// work (its budget ran out, it stalled): "partial", from that work, or
	// "fresh", from the snapshot's commit. "" is "partial".
	Resume string `mapstructure:"resume" json:"resume" yaml:"resume"`
	// FileListLimit bounds the file listing frozen into the prompt.
	FileListLimit int                `mapstructure:"file_list_limit" json:"file_list_limit" yaml:"file_list_limit"`
	Command       PatchCommandConfig `mapstructure:"command" json:"command" yaml:"command"`
	OpenAI        OpenAIConfig       `mapstructure:"openai" json:"openai" yaml:"openai"`
	// Repositories holds per-repository settings: gate commands and push.
	Repositories []RepositoryConfig `mapstructure:"repositories" json:"repositories" yaml:"repositories"`
	// Retention is how long a workspace is kept once it can go: after its
	// objective is DONE or a retry superseded its workorder (package
	// retention has the whole rule).
	Retention time.Duration `mapstructure:"retention" json:"retention" yaml:"retention"`
	// GCInterval is how often each worker prunes workspaces and gc's
	// mirrors in its own git dir.
	GCInterval time.Duration `mapstructure:"gc_interval" json:"gc_interval" yaml:"gc_interval"`
}

// AuthorConfig is the author and committer of patch commits.
type AuthorConfig struct {
	Name  string `mapstructure:"name" json:"name" yaml:"name"`
	Email string `mapstructure:"email" json:"email" yaml:"email"`
}

// PatchCommandConfig configures the command generator: an external coding
// agent run in the workspace with the generation input on stdin and in the
// file $AZOLLA_INPUT_FILE.
type PatchCommandConfig struct {
	// Run is the agent's command line; "" with a Preset means the
	// preset's (see CommandLine).
	Run string `mapstructure:"run" json:"run" yaml:"run"`
	// Preset names a headless coding agent whose defaults apply: its
	// command line when Run is "", and the parser that reads a run report
	// from its output when it writes none (claude-code, codex, aider; ""
	// for none). Its API key reaches it by name through pass_env.
	Preset    string `mapstructure:"preset" json:"preset" yaml:"preset"`
	RunConfig `mapstructure:",squash" yaml:",inline"`
}

// OpenAIConfig configures the openai generator: any OpenAI-compatible
// chat-completions endpoint.
type OpenAIConfig struct {
	// BaseURL is the API root, e.g. https://api.openai.com/v1.
	BaseURL string `mapstructure:"base_url" json:"base_url" yaml:"base_url"`
	Model   string `mapstructure:"model" json:"model" yaml:"model"`
	// APIKey defaults to $OPENAI_API_KEY. Secret: print it only via Masked.
	APIKey string `mapstructure:"api_key" json:"api_key" yaml:"api_key"`
	// TokenParam is the request field of the completion token limit:
	// max_completion_tokens, which newer OpenAI models require, or
	// max_tokens, for servers that know only that one.
	TokenParam string `mapstructure:"token_param" json:"token_param" yaml:"token_param"`
	// MaxTokens is the completion token limit sent with each request.
	MaxTokens int `mapstructure:"max_tokens" json:"max_tokens" yaml:"max_tokens"`
	// MaxConcurrency caps the requests in flight to base_url from one
	// worker process.
	MaxConcurrency int `mapstructure:"max_concurrency" json:"max_concurrency" yaml:"max_concurrency"`
	// MaxAttempts bounds the requests of one generation when the endpoint
	// answers 429 or 503.
	MaxAttempts int `mapstructure:"max_attempts" json:"max_attempts" yaml:"max_attempts"`
}

// RepositoryConfig is one repository's settings, matched by the objective's
// repository string exactly.
type RepositoryConfig struct {
	Repository string `mapstructure:"repository" json:"repository" yaml:"repository"`
	// GateCommands run in the workspace, in order, after the built-in gate
	// checks pass; the first to fail fails the gate.
	GateCommands []string `mapstructure:"gate_commands" json:"gate_commands" yaml:"gate_commands"`
	// GateBudget bounds all gate commands together; 0 means DefaultGateBudget.
	GateBudget time.Duration `mapstructure:"gate_budget" json:"gate_budget" yaml:"gate_budget"`
	// SelectCommand, when set, breaks exact ties between an objective's
	// candidates (docs/patches.md#several-candidates): it runs like a gate
	// command and prints the chosen attempt number.
	SelectCommand string `mapstructure:"select_command" json:"select_command" yaml:"select_command"`
	// MaxConcurrentRuns bounds the repository's runs at once (a model
	// quota, a shared test database), across every worker, as
	// lifecycle.max_concurrent_runs bounds them all. 0: no bound.
	MaxConcurrentRuns int `mapstructure:"max_concurrent_runs" json:"max_concurrent_runs" yaml:"max_concurrent_runs"`
	// PushRemote, when set, is where each patch branch is force-pushed (a
	// URL or an absolute path). Off by default.
	PushRemote string `mapstructure:"push_remote" json:"push_remote" yaml:"push_remote"`
	// GatePassEnv, GateEnv, GateSecretEnv, GateNetwork and GateBinds are
	// the gate commands' run settings (see RunConfig). Their network is
	// none unless GateNetwork is "host": tests run code an agent wrote.
	GatePassEnv   []string          `mapstructure:"gate_pass_env" json:"gate_pass_env" yaml:"gate_pass_env"`
	GateEnv       map[string]string `mapstructure:"gate_env" json:"gate_env" yaml:"gate_env"`
	GateSecretEnv []string          `mapstructure:"gate_secret_env" json:"gate_secret_env" yaml:"gate_secret_env"`
	GateNetwork   string            `mapstructure:"gate_network" json:"gate_network" yaml:"gate_network"`
	GateBinds     []BindConfig      `mapstructure:"gate_binds" json:"gate_binds" yaml:"gate_binds"`
	// GateEgress are the hosts gate commands may reach under gate_network
	// allowlist (a service the tests need).
	GateEgress []string `mapstructure:"gate_egress" json:"gate_egress" yaml:"gate_egress"`
	// Forge, when its kind is set, gets a pull request for each objective
	// whose gate passes (docs/pull-requests.md).
	Forge ForgeConfig `mapstructure:"forge" json:"forge" yaml:"forge"`
	// Setup prepares the environment the agent and the gate commands run
	// in (docs/repositories.md).
	Setup SetupConfig `mapstructure:"setup" json:"setup" yaml:"setup"`
	// BudgetUSD is the budget_usd given to an objective created on this
	// repository without one; 0 gives none.
	BudgetUSD float64 `mapstructure:"budget_usd" json:"budget_usd" yaml:"budget_usd"`
	// Attempts is the attempts given to an objective created on this
	// repository without them; 0 or 1: one candidate.
	Attempts int `mapstructure:"attempts" json:"attempts" yaml:"attempts"`
}

// Gate returns the gate commands' run settings.
func (r RepositoryConfig) Gate() RunConfig {
	return RunConfig{PassEnv: r.GatePassEnv, Env: r.GateEnv, SecretEnv: r.GateSecretEnv, Network: r.GateNetwork,
		Binds: r.GateBinds, Egress: r.GateEgress}
}

// Patch generators.
const (
	GeneratorStatic  = "static"
	GeneratorCommand = "command"
	GeneratorOpenAI  = "openai"
)

// Where a round starts (patch.resume).
const (
	ResumePartial = "partial"
	ResumeFresh   = "fresh"
)

// DefaultGateBudget bounds a repository's gate commands when it sets none.
const DefaultGateBudget = 10 * time.Minute

// Workspace retention defaults: a week to push or fetch a branch the gate
// warned about, and a pass every hour.
const (
	DefaultRetention  = 7 * 24 * time.Hour
	DefaultGCInterval = time.Hour
)

// Repository returns the settings of repo, the zero value when it has none.
func (p PatchConfig) Repository(repo string) RepositoryConfig {
	for _, r := range p.Repositories {
		if r.Repository == repo {
			if r.GateBudget == 0 {
				r.GateBudget = DefaultGateBudget
			}
			return r
		}
	}
	return RepositoryConfig{Repository: repo, GateBudget: DefaultGateBudget}
}

// StoreConfig selects and addresses the store backend.
type StoreConfig struct {
	// Driver is DriverSQLite or DriverPostgres.
	Driver string `mapstructure:"driver" json:"driver" yaml:"driver"`
	// DSN is the PostgreSQL connection string, a postgres:// URL or libpq
	// key=value form. It carries the password: print it only via Masked.
	DSN string `mapstructure:"dsn" json:"dsn" yaml:"dsn"`
	// SQLitePath overrides <data_dir>/azolla.db; see Config.SQLitePath.
	SQLitePath string `mapstructure:"sqlite_path" json:"sqlite_path" yaml:"sqlite_path"`
	// Retention is how long the rows that served only a finished step
	// (its claims, a settled job's leases and leftover messages) are kept
	// once their use ended; see store.PruneFinishedParams.
	Retention time.Duration `mapstructure:"retention" json:"retention" yaml:"retention"`
	// GCInterval is how often each worker prunes them.
	GCInterval time.Duration `mapstructure:"gc_interval" json:"gc_interval" yaml:"gc_interval"`
}

// ClaimConfig tunes the claim/lease protocol.
type ClaimConfig struct {
	// LeaseTTL is how long a claim lives without renewal. 30s-120s suits most
	// workers: shorter churns renewals, longer delays recovery from a crash.
	LeaseTTL time.Duration `mapstructure:"lease_ttl" json:"lease_ttl" yaml:"lease_ttl"`
}

// LogConfig shapes the process logger; see Config.Logger.
type LogConfig struct {
	Level  string `mapstructure:"level" json:"level" yaml:"level"`
	Format string `mapstructure:"format" json:"format" yaml:"format"`
}

// Store drivers.
const (
	DriverSQLite   = "sqlite"
	DriverPostgres = "postgres"
)

// Lease TTL bounds enforced by Validate.
const (
	MinLeaseTTL = time.Second
	MaxLeaseTTL = 10 * time.Minute
)

// Files and folders inside the data dir.
const (
	sqliteFile   = "azolla.db"
	temporalFile = "temporal.db"
	workDir      = "work"
	gitDir       = "git"
)

// DefaultTaskQueue is the task queue of the lifecycle workers.
const DefaultTaskQueue = "azolla-lifecycle"

// DefaultCommand is what COMMAND_DIAZOTROPH runs until one is configured: it
// names the work it was given and echoes the prompt back, enough to take an
// objective through the whole lifecycle.
const DefaultCommand = `echo "azolla: objective $AZOLLA_OBJECTIVE_ID, workorder $AZOLLA_WORK_ORDER_ID"; cat`

// Default returns the defaults, with the data dir taken from the process
// environment.
func Default() Config { return DefaultFor(os.Getenv) }

// DefaultFor is Default with the environment read through getenv, so callers
// that inject their environment get matching defaults.
func DefaultFor(getenv func(string) string) Config {
	return Config{
		DataDir: DefaultDataDir(getenv),
		Store:   StoreConfig{Driver: DriverSQLite, Retention: DefaultStoreRetention, GCInterval: DefaultStoreGCInterval},
		Claim:   ClaimConfig{LeaseTTL: 60 * time.Second},
		Log:     LogConfig{Level: "info", Format: "text"},
		Temporal: TemporalConfig{Address: "127.0.0.1:7233", Namespace: "default",
			TaskQueue: DefaultTaskQueue},
		Dev: DevConfig{Host: "127.0.0.1", GRPCPort: 7233, UIPort: 8233},
		Lifecycle: LifecycleConfig{Diazotroph: "COMMAND_DIAZOTROPH", Budget: 10 * time.Minute,
			PollInterval: 5 * time.Second},
		Diazotroph: DiazotrophConfig{Command: CommandConfig{Run: DefaultCommand,
			RunConfig: RunConfig{Network: NetworkHost}}},
		Patch: PatchConfig{Generator: GeneratorStatic,
			Author:        AuthorConfig{Name: "azolla", Email: "azolla@localhost"},
			MaxPatchBytes: 4 << 20, FileListLimit: 200,
			// No network set: the host's, or with a preset an allowlist of
			// its model's hosts (PatchCommandPolicy).
			Command:   PatchCommandConfig{},
			Retention: DefaultRetention, GCInterval: DefaultGCInterval, EarlyStop: true, Resume: ResumePartial,
			OpenAI: OpenAIConfig{BaseURL: "https://api.openai.com/v1", APIKey: getenv("OPENAI_API_KEY"),
				TokenParam: patchgen.TokenParamMaxCompletionTokens, MaxTokens: patchgen.DefaultOpenAIMaxTokens,
				MaxConcurrency: patchgen.DefaultOpenAIMaxConcurrency, MaxAttempts: patchgen.DefaultOpenAIMaxAttempts}},
		// The control plane's own defaults: one home for each.
		ControlPlane: ControlPlaneConfig{Address: DefaultControlPlaneAddress, LeaseTTL: controlplane.DefaultLeaseTTL,
			HeartbeatInterval: controlplane.DefaultHeartbeatInterval, MaxAttempts: controlplane.DefaultMaxAttempts,
			ReaperInterval: controlplane.DefaultReaperInterval, MaxWait: controlplane.MaxClaimWait},
		Tasks:     defaultTasks(),
		Deadlines: defaultDeadlines(),
		Ops:       OpsConfig{Address: DefaultOpsAddress},
		Executor:  defaultExecutor(),
	}
}

// DefaultDataDir follows the XDG base directory spec: $XDG_DATA_HOME/azolla,
// else $HOME/.local/share/azolla; "" when neither is usable, which Validate
// reports.
func DefaultDataDir(getenv func(string) string) string {
	// The spec says a relative XDG_DATA_HOME is invalid and must be ignored.
	if xdg := getenv("XDG_DATA_HOME"); xdg != "" && filepath.IsAbs(xdg) {
		return filepath.Join(xdg, "azolla")
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, ".local", "share", "azolla")
	}
	return ""
}

// SQLitePath is the SQLite database file: store.sqlite_path when set (a
// relative path is relative to the working directory), else
// <data_dir>/azolla.db.
func (c Config) SQLitePath() string {
	if c.Store.SQLitePath != "" {
		return c.Store.SQLitePath
	}
	return filepath.Join(c.DataDir, sqliteFile)
}

// TemporalDBPath is the embedded server's SQLite file: dev.db_path when set,
// else <data_dir>/temporal.db.
func (c Config) TemporalDBPath() string {
	if c.Dev.DBPath != "" {
		return c.Dev.DBPath
	}
	return filepath.Join(c.DataDir, temporalFile)
}

// CommandDir is COMMAND_DIAZOTROPH's working directory.
func (c Config) CommandDir() string {
	if c.Diazotroph.Command.Dir != "" {
		return c.Diazotroph.Command.Dir
	}
	return filepath.Join(c.DataDir, workDir)
}

// GitDir is where PATCH_DIAZOTROPH keeps mirrors and workspaces.
// EnvironmentsDir is where this host keeps repositories' environments
// (package environment): in the data dir, which no run sees but through
// the binds of the environment it is given.
func (c Config) EnvironmentsDir() string { return filepath.Join(c.DataDir, "environments") }

func (c Config) GitDir() string {
	if c.Patch.GitDir != "" {
		return c.Patch.GitDir
	}
	return filepath.Join(c.DataDir, gitDir)
}
