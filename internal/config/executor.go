package config

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/executor/redact"
	"github.com/azolla/azolla/internal/executor/runreport"
	"github.com/azolla/azolla/internal/executor/sandbox"
)

// ExecutorConfig says how the processes azolla runs for work (a
// COMMAND_DIAZOTROPH command, the command generator's agent, gate commands)
// are confined and limited, on workers and remote workers alike. What each
// executor sees beyond that is its RunConfig.
type ExecutorConfig struct {
	// Sandbox is auto (bubblewrap where it works, else none, said in the
	// start-up log), bwrap (required: the worker refuses to start without
	// it) or none.
	Sandbox string `mapstructure:"sandbox" json:"sandbox" yaml:"sandbox"`
	// Bwrap is the bubblewrap binary; "" means bwrap from PATH.
	Bwrap string `mapstructure:"bwrap" json:"bwrap" yaml:"bwrap"`
	// MaxProcesses bounds each run's processes and threads; 0 for none.
	MaxProcesses int `mapstructure:"max_processes" json:"max_processes" yaml:"max_processes"`
	// MaxFileSizeMB bounds any file a run writes, in MiB; 0 for none.
	MaxFileSizeMB int `mapstructure:"max_file_size_mb" json:"max_file_size_mb" yaml:"max_file_size_mb"`
	// MaxAddressSpaceMB bounds each process's virtual memory, in MiB
	// (RLIMIT_AS); 0 for none, the default, since runtimes such as the JVM
	// and V8 reserve far more than they use.
	MaxAddressSpaceMB int `mapstructure:"max_address_space_mb" json:"max_address_space_mb" yaml:"max_address_space_mb"`
	// MaxMemoryMB bounds a run's memory as a whole, in MiB, where the
	// worker can give it a memory cgroup; 0 for none.
	MaxMemoryMB int `mapstructure:"max_memory_mb" json:"max_memory_mb" yaml:"max_memory_mb"`
	// RunsDir holds each run's private HOME and TMPDIR while it runs;
	// "" means <data_dir>/runs.
	RunsDir string `mapstructure:"runs_dir" json:"runs_dir" yaml:"runs_dir"`
	// TranscriptMax bounds, in bytes before compression, what is kept of
	// a run's transcript (its report's transcript and the tail of its
	// stdout and stderr); a longer one keeps its end. 0 keeps none.
	TranscriptMax int `mapstructure:"transcript_max" json:"transcript_max" yaml:"transcript_max"`
	// StallTimeout stops a COMMAND_DIAZOTROPH command or a command
	// generator's agent that writes no output and changes no file for that
	// long; its outcome is STALLED. 0 turns the stop off.
	StallTimeout time.Duration `mapstructure:"stall_timeout" json:"stall_timeout" yaml:"stall_timeout"`
}

// RunConfig is what one executor's runs get beyond their working directory
// and a private HOME and TMPDIR: see package sandbox for the whole rule.
type RunConfig struct {
	// PassEnv names variables copied from the worker's environment (an
	// agent's API key). azolla's own (AZOLLA_*, PGPASSWORD, ...) are
	// refused.
	PassEnv []string `mapstructure:"pass_env" json:"pass_env" yaml:"pass_env"`
	// Env sets variables.
	Env map[string]string `mapstructure:"env" json:"env" yaml:"env"`
	// SecretEnv names variables of PassEnv or Env to redact from records
	// although their names do not say they are secret (names with KEY,
	// TOKEN, SECRET, PASSWORD ... are redacted anyway).
	SecretEnv []string `mapstructure:"secret_env" json:"secret_env" yaml:"secret_env"`
	// Network is host, none (loopback only; needs the sandbox) or
	// allowlist (none, plus azolla's egress proxy to the hosts of Egress
	// and Credentials).
	Network string `mapstructure:"network" json:"network" yaml:"network"`
	// Egress are the hosts an allowlist run may reach: "api.example.com",
	// "host:port", "*.example.com".
	Egress []string `mapstructure:"egress" json:"egress" yaml:"egress"`
	// Credentials are keys the egress proxy adds, as headers, to what an
	// allowlist run sends to their hosts: the run never holds them.
	Credentials []CredentialConfig `mapstructure:"credentials" json:"credentials" yaml:"credentials"`
	// Home, when its path is set, is the run's HOME instead of a private
	// one: where an agent keeps its login and settings. Read-only unless
	// its mode is rw; never the worker's own HOME unless named here.
	Home BindConfig `mapstructure:"home" json:"home" yaml:"home"`
	// Binds are host paths the run sees (caches such as GOMODCACHE).
	Binds []BindConfig `mapstructure:"binds" json:"binds" yaml:"binds"`
}

// CredentialConfig is a key an allowlist run uses without holding it.
type CredentialConfig struct {
	// Host is the endpoint's host (or host:port).
	Host string `mapstructure:"host" json:"host" yaml:"host"`
	// Header is the header that carries the key (x-api-key,
	// Authorization); Format its value, {secret} standing for the key
	// ("Bearer {secret}"); "" is the key alone.
	Header string `mapstructure:"header" json:"header" yaml:"header"`
	Format string `mapstructure:"format" json:"format" yaml:"format"`
	// SecretEnv names the worker's variable that holds the key. It may not
	// be passed to the run as well.
	SecretEnv string `mapstructure:"secret_env" json:"secret_env" yaml:"secret_env"`
	// BaseURLEnv is the variable the agent reads its endpoint from
	// (ANTHROPIC_BASE_URL): it is pointed at the proxy, with BasePath after
	// the host.
	BaseURLEnv string `mapstructure:"base_url_env" json:"base_url_env" yaml:"base_url_env"`
	BasePath   string `mapstructure:"base_path" json:"base_path" yaml:"base_path"`
	// Scheme is https (the default), or http for a local endpoint.
	Scheme string `mapstructure:"scheme" json:"scheme" yaml:"scheme"`
}

// BindConfig is a host path a run sees at the same path.
type BindConfig struct {
	Path string `mapstructure:"path" json:"path" yaml:"path"`
	// Mode is ro (the default) or rw.
	Mode string `mapstructure:"mode" json:"mode" yaml:"mode"`
}

// Network values of RunConfig.
const (
	NetworkHost = string(sandbox.NetworkHost)
	NetworkNone = string(sandbox.NetworkNone)
	// NetworkAllowlist: none, plus azolla's egress proxy to the hosts of
	// egress and credentials.
	NetworkAllowlist = string(sandbox.NetworkAllowlist)
)

// Bind modes.
const (
	BindReadOnly  = "ro"
	BindReadWrite = "rw"
)

// Sandbox modes, as executor.sandbox spells them.
const (
	SandboxAuto  = string(sandbox.ModeAuto)
	SandboxBwrap = string(sandbox.ModeBwrap)
	SandboxNone  = string(sandbox.ModeNone)
)

// Executor defaults.
const (
	DefaultSandbox       = SandboxAuto
	DefaultMaxProcesses  = 1024
	DefaultMaxFileSizeMB = 4096
	DefaultMaxMemoryMB   = 8192
	// DefaultTranscriptMax keeps the last MiB of a run's transcript.
	DefaultTranscriptMax = 1 << 20
	// DefaultStallTimeout is long enough for an agent that prints nothing
	// until it ends (claude-code's json output) to think through several
	// slow model turns between edits, when only its files, HOME and TMPDIR
	// show it working; a run waiting for a human never progresses, so a
	// longer wait costs only time, where a shorter one could kill real
	// work. It equals the default lifecycle.budget, which therefore ends
	// such a run first: the stop matters for the longer budgets agents are
	// given (docs/patches.md#a-run-that-makes-no-progress).
	DefaultStallTimeout = 10 * time.Minute
	// MinStallTimeout refuses a unit left out ("10" is ten nanoseconds).
	MinStallTimeout = time.Second
	runsDir         = "runs"
)

func defaultExecutor() ExecutorConfig {
	return ExecutorConfig{Sandbox: DefaultSandbox, MaxProcesses: DefaultMaxProcesses,
		MaxFileSizeMB: DefaultMaxFileSizeMB, MaxMemoryMB: DefaultMaxMemoryMB, TranscriptMax: DefaultTranscriptMax,
		StallTimeout: DefaultStallTimeout}
}

// RunsDir is where runs' private directories go.
func (c Config) RunsDir() string {
	if c.Executor.RunsDir != "" {
		return c.Executor.RunsDir
	}
	return filepath.Join(c.DataDir, runsDir)
}

// Limits are the executor limits in bytes.
func (e ExecutorConfig) Limits() sandbox.Limits {
	const mib = 1 << 20
	return sandbox.Limits{Processes: e.MaxProcesses, FileSize: int64(e.MaxFileSizeMB) * mib,
		AddressSpace: int64(e.MaxAddressSpaceMB) * mib, Memory: int64(e.MaxMemoryMB) * mib}
}

// Policy is r as the sandbox's policy of the executor at key name, whose
// network is fallback when r names none.
func (r RunConfig) Policy(name string, fallback sandbox.Network) sandbox.Policy {
	p := sandbox.Policy{Name: name, PassEnv: r.PassEnv, Env: r.Env, SecretEnv: r.SecretEnv,
		Network: sandbox.Network(r.Network), Binds: make([]sandbox.Bind, 0, len(r.Binds)), Egress: r.Egress}
	for _, c := range r.Credentials {
		p.Credentials = append(p.Credentials, sandbox.Credential{Host: c.Host, Header: c.Header, Format: c.Format,
			SecretEnv: c.SecretEnv, BaseURLEnv: c.BaseURLEnv, BasePath: c.BasePath, Scheme: c.Scheme})
	}
	if p.Network == "" {
		p.Network = fallback
	}
	if r.Home.Path != "" {
		p.Home = &sandbox.Bind{Path: r.Home.Path, Writable: r.Home.Mode == BindReadWrite}
	}
	for _, b := range r.Binds {
		p.Binds = append(p.Binds, sandbox.Bind{Path: b.Path, Writable: b.Mode == BindReadWrite})
	}
	return p
}

// Executors are the policies of every configured executor: the
// COMMAND_DIAZOTROPH command, the command generator and each repository's
// gate commands and setup.
func (c Config) Executors() []sandbox.Policy {
	out := []sandbox.Policy{c.CommandPolicy(), c.PatchCommandPolicy()}
	for i := range c.Patch.Repositories {
		out = append(out, c.GatePolicy(i), c.SetupPolicy(i))
	}
	return out
}

// CommandPolicy is COMMAND_DIAZOTROPH's: the host's network unless set.
func (c Config) CommandPolicy() sandbox.Policy {
	return c.Diazotroph.Command.Policy("diazotroph.command", sandbox.NetworkHost)
}

// PatchCommandPolicy is the command generator's. With a preset and no
// network set, the agent's network is an allowlist of its model's hosts,
// and the model's key, when the worker has it under the preset's name and
// passes it no other way, is added by the egress proxy: the agent never
// holds it. Without a preset, the host's network unless set.
func (c Config) PatchCommandPolicy() sandbox.Policy {
	pc := c.Patch.Command
	p := pc.Policy("patch.command", sandbox.NetworkHost)
	if pc.Preset == "" || pc.Network != "" {
		return p
	}
	preset, err := runreport.LookupPreset(pc.Preset)
	if err != nil {
		return p // validation says so
	}
	p.Network = sandbox.NetworkAllowlist
	for _, h := range preset.Egress {
		if !slices.Contains(p.Egress, h) {
			p.Egress = append(p.Egress, h)
		}
	}
	if k := preset.Key; k != nil && len(pc.Credentials) == 0 && !slices.Contains(pc.PassEnv, k.SecretEnv) {
		if _, inEnv := pc.Env[k.SecretEnv]; !inEnv {
			p.Credentials = append(p.Credentials, sandbox.Credential{Host: k.Host, Header: k.Header, Format: k.Format,
				SecretEnv: k.SecretEnv, BaseURLEnv: k.BaseURLEnv, BasePath: k.BasePath})
		}
	}
	return p
}

// GatePolicy is the gate commands' of patch.repositories[i]: no network
// unless gate_network is host, since they run code an agent wrote.
func (c Config) GatePolicy(i int) sandbox.Policy {
	return c.Patch.Repositories[i].Gate().Policy(fmt.Sprintf("patch.repositories[%d].%s", i, gateKey), sandbox.NetworkNone)
}

// gateKey names a repository's gate policy; its settings are the keys
// gate_pass_env, gate_env and so on.
const gateKey = "gate"

// unjoin returns the errors errors.Join joined, err alone otherwise.
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// DefaultGatePolicy is the gate commands' policy for a repository without
// settings of its own.
func DefaultGatePolicy() sandbox.Policy {
	return RunConfig{}.Policy("gate", sandbox.NetworkNone)
}

// HiddenPaths are the paths no run may see: azolla's state and key files.
// The caller adds the configuration file it read and the worker's HOME is
// added by the sandbox.
func (c Config) HiddenPaths() []string {
	paths := []string{c.DataDir, c.SQLitePath(), c.TemporalDBPath(), c.GitDir(), c.RunsDir(), c.Temporal.TLS.KeyFile,
		c.ControlPlane.KeyFile}
	for _, r := range c.Patch.Repositories {
		paths = append(paths, r.Forge.TokenFile)
	}
	for _, n := range slices.Sorted(maps.Keys(c.Substrates)) {
		paths = append(paths, c.Substrates[n].SQLitePath)
	}
	return slices.DeleteFunc(paths, func(p string) bool { return p == "" })
}

// validateExecutors checks the executor section and every executor's run
// settings, refusing an env value that holds one of azolla's own secrets.
func (c Config) validateExecutors(add func(key, format string, args ...any)) {
	e := c.Executor
	if !slices.Contains(sandbox.Modes, sandbox.Mode(e.Sandbox)) {
		add("executor.sandbox", "must be one of %v, got %q", sandbox.Modes, e.Sandbox)
	}
	for _, l := range []struct {
		key string
		v   int
	}{{"max_processes", e.MaxProcesses}, {"max_file_size_mb", e.MaxFileSizeMB},
		{"max_address_space_mb", e.MaxAddressSpaceMB}, {"max_memory_mb", e.MaxMemoryMB}} {
		if l.v < 0 {
			add("executor."+l.key, "must not be negative (0 means no limit), got %d", l.v)
		}
	}
	if n := c.Patch.Command.Preset; n != "" {
		if _, err := runreport.LookupPreset(n); err != nil {
			add("patch.command.preset", "%v", err)
		}
	}
	if e.TranscriptMax < 0 {
		add("executor.transcript_max", "must not be negative (0 keeps no transcript), got %d", e.TranscriptMax)
	}
	if e.StallTimeout != 0 && e.StallTimeout < MinStallTimeout {
		add("executor.stall_timeout", "must be 0 (off) or at least %s, got %s", MinStallTimeout, e.StallTimeout)
	}
	if e.MaxProcesses > 0 && e.MaxProcesses < 16 {
		add("executor.max_processes", "must be 0 (no limit) or at least 16, got %d", e.MaxProcesses)
	}
	secrets := redact.New(c.Secrets()...)
	for _, p := range c.Executors() {
		for _, err := range unjoin(p.Check()) {
			// Check's messages start with the key: as written in the
			// file, gate settings are gate_pass_env, not gate.pass_env.
			key, msg, _ := strings.Cut(err.Error(), ": ")
			add(strings.Replace(key, gateKey+".", gateKey+"_", 1), "%s", msg)
		}
		for _, n := range slices.Sorted(maps.Keys(p.Env)) {
			if name, found := secrets.Find(p.Env[n]); found {
				add(strings.Replace(p.Name+".env."+n, gateKey+".", gateKey+"_", 1),
					"holds the value of %s, azolla's own secret, which never reaches a run", name)
			}
		}
	}
	for _, b := range c.binds() {
		if b.bind.Mode != "" && b.bind.Mode != BindReadOnly && b.bind.Mode != BindReadWrite {
			add(b.key+".mode", "must be %q or %q, got %q", BindReadOnly, BindReadWrite, b.bind.Mode)
		}
	}
}

// keyedBind is a bind and its key.
type keyedBind struct {
	key  string
	bind BindConfig
}

// binds lists every configured bind with its key.
func (c Config) binds() []keyedBind {
	var out []keyedBind
	add := func(prefix string, r RunConfig) {
		if r.Home.Path != "" || r.Home.Mode != "" {
			out = append(out, keyedBind{prefix + ".home", r.Home})
		}
		for i, b := range r.Binds {
			out = append(out, keyedBind{fmt.Sprintf("%s.binds[%d]", prefix, i), b})
		}
	}
	add("diazotroph.command", c.Diazotroph.Command.RunConfig)
	add("patch.command", c.Patch.Command.RunConfig)
	for i, r := range c.Patch.Repositories {
		for j, b := range r.GateBinds {
			out = append(out, keyedBind{fmt.Sprintf("patch.repositories[%d].gate_binds[%d]", i, j), b})
		}
	}
	return out
}

// CommandLine is the command generator's command line: Run, or the
// preset's when Run is "" ("" when neither is set or the preset is
// unknown, which validation refuses).
func (p PatchCommandConfig) CommandLine() string {
	if strings.TrimSpace(p.Run) != "" || p.Preset == "" {
		return p.Run
	}
	ps, err := runreport.LookupPreset(p.Preset)
	if err != nil {
		return ""
	}
	return ps.Command
}
