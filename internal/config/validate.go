package config

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/executor/patchgen"
	"github.com/azolla/azolla/internal/executor/sandbox"
)

// Workorder budget bounds enforced by Validate.
const (
	MinBudget = time.Second
	MaxBudget = 24 * time.Hour
	// MaxAttempts is the most candidates an objective's run may make, as
	// its schema says.
	MaxAttempts = 20
	// MaxBudgetUSD is the most an objective's budget may be, as its
	// schema says.
	MaxBudgetUSD = 1_000_000
	// MaxGateBudget bounds a repository's gate commands; the gate activity's
	// own timeout is set above it.
	MaxGateBudget = 6 * time.Hour
	// MinGCInterval keeps the retention pass (which gc's every mirror) from
	// running back to back.
	MinGCInterval = time.Minute
)

// diazotrophType is the workorder schema's pattern for diazotroph_type.
var diazotrophType = regexp.MustCompile(`^[A-Z][A-Z0-9_]*_DIAZOTROPH$`)

var (
	logLevels  = []string{"debug", "info", "warn", "error"}
	logFormats = []string{"text", "json"}
)

// Validate reports every problem at once, each prefixed by its key, joined
// with errors.Join; nil means the config is usable. Messages never contain
// the DSN, which may hold a password.
func (c Config) Validate() error {
	var errs []error
	add := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{key}, args...)...))
	}

	if c.DataDir == "" {
		add("data_dir", "must be set (neither $XDG_DATA_HOME nor $HOME is set)")
	}
	if c.Lifecycle.MaxConcurrentRuns < 0 {
		add("lifecycle.max_concurrent_runs", "must be how many runs the deployment has at once, 0 for no bound, got %d",
			c.Lifecycle.MaxConcurrentRuns)
	}
	if c.Worker.MaxRuns < 0 {
		add("worker.max_runs", "must be how many runs a worker executes at once, 0 for the CPU count, got %d", c.Worker.MaxRuns)
	}

	switch c.Store.Driver {
	case DriverSQLite:
		// A DSN with the sqlite driver is almost always a forgotten
		// store.driver=postgres; failing beats silently using a local file.
		if c.Store.DSN != "" {
			add("store.dsn", "is set but store.driver is %q; set store.driver to %q or unset store.dsn", DriverSQLite, DriverPostgres)
		}
	case DriverPostgres:
		if c.Store.SQLitePath != "" {
			add("store.sqlite_path", "is set but store.driver is %q", DriverPostgres)
		}
		if c.Store.DSN == "" {
			add("store.dsn", "required when store.driver is %q", DriverPostgres)
		} else if msg := checkDSN(c.Store.DSN); msg != "" {
			add("store.dsn", "%s", msg)
		}
	default:
		add("store.driver", "must be %q or %q, got %q", DriverSQLite, DriverPostgres, c.Store.Driver)
	}

	c.Store.validateRetention(add)
	if ttl := c.Claim.LeaseTTL; ttl < MinLeaseTTL || ttl > MaxLeaseTTL {
		add("claim.lease_ttl", "must be a duration between %s and %s (e.g. 60s), got %s", MinLeaseTTL, MaxLeaseTTL, ttl)
	}
	if c.Temporal.Address == "" {
		add("temporal.address", "must be host:port of a Temporal frontend")
	}
	if c.Temporal.Namespace == "" {
		add("temporal.namespace", "must be set")
	}
	if c.Temporal.TaskQueue == "" {
		add("temporal.task_queue", "must be set")
	}
	if (c.Temporal.TLS.CertFile == "") != (c.Temporal.TLS.KeyFile == "") {
		add("temporal.tls", "cert_file and key_file must be set together")
	}
	if c.Temporal.TLS.Disabled && c.Temporal.TLS.On() {
		add("temporal.tls.disabled", "cannot be combined with temporal.tls.enabled, cert_file, key_file, ca_file or server_name: unset one side")
	}
	for _, p := range []struct {
		key  string
		port int
	}{{"dev.grpc_port", c.Dev.GRPCPort}, {"dev.ui_port", c.Dev.UIPort}} {
		if p.port < 1 || p.port > 65535 {
			add(p.key, "must be a TCP port (1-65535), got %d", p.port)
		}
	}
	if c.Dev.GRPCPort == c.Dev.UIPort {
		add("dev.ui_port", "must differ from dev.grpc_port (%d)", c.Dev.GRPCPort)
	}
	if !diazotrophType.MatchString(c.Lifecycle.Diazotroph) {
		add("lifecycle.diazotroph", "must be a diazotroph type such as COMMAND_DIAZOTROPH, got %q", c.Lifecycle.Diazotroph)
	}
	if b := c.Lifecycle.Budget; b < MinBudget || b > MaxBudget {
		add("lifecycle.budget", "must be a duration between %s and %s, got %s", MinBudget, MaxBudget, b)
	}
	if p := c.Lifecycle.PollInterval; p < 100*time.Millisecond {
		add("lifecycle.poll_interval", "must be at least 100ms, got %s", p)
	} else if p >= c.Claim.LeaseTTL {
		add("lifecycle.poll_interval", "must be shorter than claim.lease_ttl (%s), the poller's leadership lease that each pass renews, got %s",
			c.Claim.LeaseTTL, p)
	}
	if strings.TrimSpace(c.Diazotroph.Command.Run) == "" {
		add("diazotroph.command.run", "must be a command line")
	}
	c.Patch.validate(add)
	c.ControlPlane.validate(add)
	if c.Ops.Address != "" {
		if _, port, err := net.SplitHostPort(c.Ops.Address); err != nil || port == "" {
			add("ops.address", "must be host:port (e.g. %s) or empty, got %q", DefaultOpsAddress, c.Ops.Address)
		}
	}
	if c.Ops.IntakeSecretEnv != "" {
		if err := sandbox.CheckName(c.Ops.IntakeSecretEnv); err != nil {
			add("ops.intake_secret_env", "%v", err)
		}
	}
	c.validateTasks(add)
	c.validateExecutors(add)
	c.validateForgeTokensStayHome(add)
	c.validateSetupSecretsStayInSetup(add)
	if !slices.Contains(logLevels, c.Log.Level) {
		add("log.level", "must be one of %s, got %q", strings.Join(logLevels, ", "), c.Log.Level)
	}
	if !slices.Contains(logFormats, c.Log.Format) {
		add("log.format", "must be one of %s, got %q", strings.Join(logFormats, ", "), c.Log.Format)
	}
	return errors.Join(errs...)
}

// checkDSN returns what is wrong with a PostgreSQL DSN, or "". It only checks
// the shape; the driver has the final word when connecting.
func checkDSN(dsn string) string {
	if !strings.Contains(dsn, "://") {
		if strings.Contains(dsn, "=") {
			return "" // libpq key=value form
		}
		return "must be a postgres:// URL or a key=value connection string"
	}
	u, err := url.Parse(dsn)
	if err != nil {
		// url.Error quotes the input, password included: say less.
		return "is not a valid URL (percent-encode special characters in the user and password)"
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return fmt.Sprintf("URL scheme must be postgres or postgresql, got %q", u.Scheme)
	}
	return ""
}

var generators = []string{GeneratorStatic, GeneratorCommand, GeneratorOpenAI}

func (p PatchConfig) validate(add func(key, format string, args ...any)) {
	if !slices.Contains(generators, p.Generator) {
		add("patch.generator", "must be one of %s, got %q", strings.Join(generators, ", "), p.Generator)
	}
	switch p.Generator {
	case GeneratorCommand:
		if strings.TrimSpace(p.Command.Run) == "" && p.Command.Preset == "" {
			add("patch.command.run", "must be a command line when patch.generator is %q (or set patch.command.preset)",
				GeneratorCommand)
		}
	case GeneratorOpenAI:
		if p.OpenAI.Model == "" {
			add("patch.openai.model", "must be set when patch.generator is %q", GeneratorOpenAI)
		}
	}
	if p.OpenAI.BaseURL != "" {
		if u, err := url.Parse(p.OpenAI.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add("patch.openai.base_url", "must be an http(s) URL such as https://api.openai.com/v1")
		}
	}
	if p.OpenAI.TokenParam != patchgen.TokenParamMaxCompletionTokens && p.OpenAI.TokenParam != patchgen.TokenParamMaxTokens {
		add("patch.openai.token_param", "must be %s or %s, got %q",
			patchgen.TokenParamMaxCompletionTokens, patchgen.TokenParamMaxTokens, p.OpenAI.TokenParam)
	}
	for _, l := range []struct {
		key string
		n   int
	}{{"max_tokens", p.OpenAI.MaxTokens}, {"max_concurrency", p.OpenAI.MaxConcurrency}, {"max_attempts", p.OpenAI.MaxAttempts}} {
		if l.n < 1 {
			add("patch.openai."+l.key, "must be positive, got %d", l.n)
		}
	}
	if strings.TrimSpace(p.Author.Name) == "" || !strings.Contains(p.Author.Email, "@") ||
		strings.ContainsAny(p.Author.Name+p.Author.Email, "<>\n") {
		add("patch.author", "needs a name and an email address (without < > or newlines)")
	}
	if p.MaxPatchBytes < 1 {
		add("patch.max_patch_bytes", "must be positive, got %d", p.MaxPatchBytes)
	}
	if p.FileListLimit < 0 {
		add("patch.file_list_limit", "must not be negative, got %d", p.FileListLimit)
	}
	if p.Retention <= 0 {
		add("patch.retention", "must be a positive duration (e.g. 168h for a week), got %s", p.Retention)
	}
	if p.GCInterval < MinGCInterval {
		add("patch.gc_interval", "must be a duration of at least %s, got %s", MinGCInterval, p.GCInterval)
	}
	if p.ParallelCandidates < 0 {
		add("patch.parallel_candidates", "must be how many candidates run at a time, 0 for all at once, got %d", p.ParallelCandidates)
	}
	if p.Resume != "" && p.Resume != ResumePartial && p.Resume != ResumeFresh {
		add("patch.resume", "must be %q or %q, got %q", ResumePartial, ResumeFresh, p.Resume)
	}
	if p.EarlyStopMaxDiffLines < 0 {
		add("patch.early_stop_max_diff_lines", "must be a number of changed lines, 0 for any size, got %d", p.EarlyStopMaxDiffLines)
	}
	seen := map[string]bool{}
	for i, r := range p.Repositories {
		key := fmt.Sprintf("patch.repositories[%d]", i)
		switch {
		case strings.TrimSpace(r.Repository) == "":
			add(key+".repository", "must be set")
		case seen[r.Repository]:
			add(key+".repository", "is listed twice")
		}
		seen[r.Repository] = true
		for j, cmd := range r.GateCommands {
			if strings.TrimSpace(cmd) == "" {
				add(fmt.Sprintf("%s.gate_commands[%d]", key, j), "must be a command line")
			}
		}
		if r.SelectCommand != "" && strings.TrimSpace(r.SelectCommand) == "" {
			add(key+".select_command", "must be a command line, or left out")
		}
		if b := r.GateBudget; b != 0 && (b < MinBudget || b > MaxGateBudget) {
			add(key+".gate_budget", "must be a duration between %s and %s, got %s", MinBudget, MaxGateBudget, b)
		}
		if r.MaxConcurrentRuns < 0 {
			add(key+".max_concurrent_runs", "must be how many of its runs may go at once, 0 for no bound, got %d", r.MaxConcurrentRuns)
		}
		if strings.HasPrefix(r.PushRemote, "-") {
			add(key+".push_remote", "must be a URL or an absolute path")
		}
		if r.Attempts < 0 || r.Attempts > MaxAttempts {
			add(key+".attempts", "must be a number of candidates from 1 to %d (0: one), got %d", MaxAttempts, r.Attempts)
		}
		if b := r.BudgetUSD; math.IsNaN(b) || b < 0 || b > MaxBudgetUSD {
			add(key+".budget_usd", "must be a number of dollars from 0 (no default cap) to %v, got %v", MaxBudgetUSD, b)
		}
		r.Forge.validate(key+".forge", add)
		r.Setup.validate(key+".setup", add)
	}
}

func (c ControlPlaneConfig) validate(add func(key, format string, args ...any)) {
	if _, port, err := net.SplitHostPort(c.Address); err != nil || port == "" {
		add("control_plane.address", "must be host:port (e.g. %s), got %q", DefaultControlPlaneAddress, c.Address)
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		add("control_plane.cert_file", "cert_file and key_file must be set together")
	}
	if c.ClientCAFile != "" && c.CertFile == "" {
		add("control_plane.client_ca_file", "requires client certificates over HTTPS: set cert_file and key_file too")
	}
	if c.RedisURL != "" {
		if u, err := url.Parse(c.RedisURL); err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") {
			add("control_plane.redis_url", "must be a redis:// or rediss:// URL")
		}
	}
	if ttl := c.LeaseTTL; ttl < MinLeaseTTL || ttl > MaxLeaseTTL {
		add("control_plane.lease_ttl", "must be a duration between %s and %s (e.g. 60s), got %s", MinLeaseTTL, MaxLeaseTTL, ttl)
	}
	// Two heartbeats must fit in a lease, or one late request loses it.
	if h := c.HeartbeatInterval; h <= 0 || 2*h > c.LeaseTTL {
		add("control_plane.heartbeat_interval", "must be positive and at most half of control_plane.lease_ttl (%s), got %s", c.LeaseTTL, h)
	}
	if c.MaxAttempts < 1 {
		add("control_plane.max_attempts", "must be at least 1, got %d", c.MaxAttempts)
	}
	if c.ReaperInterval < 100*time.Millisecond {
		add("control_plane.reaper_interval", "must be at least 100ms, got %s", c.ReaperInterval)
	}
	if w := c.MaxWait; w <= 0 || w > MaxControlPlaneWait {
		add("control_plane.max_wait", "must be a duration up to %s, got %s", MaxControlPlaneWait, w)
	}
	for i, t := range c.RemoteDiazotrophs {
		if !diazotrophType.MatchString(t) {
			add(fmt.Sprintf("control_plane.remote_diazotrophs[%d]", i), "must be a diazotroph type such as PATCH_DIAZOTROPH, got %q", t)
		}
	}
}
