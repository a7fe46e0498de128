package runreport

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/azolla/azolla/internal/domain"
)

// Stream names the output of the agent that a preset's parser reads.
type Stream string

// The streams of a command.
const (
	Stdout Stream = "stdout"
	Stderr Stream = "stderr"
)

// Preset is the defaults for one headless coding agent: how to run it in
// the worktree and how to read a report from what it printed. Everything in
// it is a default that configuration may override.
type Preset struct {
	// Name is the preset's configuration name and the report's source.
	Name domain.ReportSource
	// Command is the shell command line (run by /bin/sh -c in the
	// worktree). It reads the generation input from $AZOLLA_INPUT_FILE;
	// its API key reaches it by name through the executor's environment,
	// never on the command line.
	Command string
	// BudgetFlag, when not "", is the agent's own spending cap, given the
	// remaining budget in dollars by CommandLine.
	BudgetFlag string
	// Output is the stream Parse reads.
	Output Stream
	// Parse derives the report from Output.
	Parse func(out []byte) (domain.RunReport, error)
	// Egress are the hosts the agent reaches: its model's. Without a
	// network configured, the agent may reach these and no other.
	Egress []string
	// Key is how the agent's model key is added on the way out, by the
	// egress proxy, so that the agent never holds it; nil: the agent
	// needs it passed (pass_env).
	Key *ModelKey
	// continueSession, when set, is how the agent continues a session of
	// its own (Continue); nil: every round starts a new one.
	continueSession func(home, worktree, id string) (string, error)
}

// ModelKey is where an agent's model key goes, and where the agent takes
// its endpoint from.
type ModelKey struct {
	// Host is the model's API host; Header the header carrying the key,
	// Format its value ({secret} is the key).
	Host, Header, Format string
	// SecretEnv is the variable the agent reads its key from, and the
	// worker's variable the proxy reads it from.
	SecretEnv string
	// BaseURLEnv is the variable the agent takes its endpoint from, with
	// BasePath after the host.
	BaseURLEnv, BasePath string
}

// The presets. The flags are those of the agents' CLI references
// (testdata/SOURCES.md):
//   - claude-code: -p runs one prompt headless; acceptEdits lets it edit
//     the worktree (which is the patch) without prompting, while shell
//     commands stay refused; --max-budget-usd is its own cap.
//   - codex: exec reads the prompt from stdin with "-"; its default
//     sandbox is read-only, so workspace-write lets it edit the worktree.
//   - aider: --yes-always answers its questions; --no-auto-commits leaves
//     the edits uncommitted, where azolla's worktree diff finds them, and
//     --no-gitignore keeps it from adding .aider* to .gitignore.
var presets = []Preset{
	{
		Name:       domain.ReportFromClaudeCode,
		Command:    `claude -p "$(cat "$AZOLLA_INPUT_FILE")" --output-format json --permission-mode acceptEdits`,
		BudgetFlag: "--max-budget-usd",
		Output:     Stdout,
		Parse:      ParseClaudeCode,
		Egress:     []string{"api.anthropic.com"},
		Key: &ModelKey{Host: "api.anthropic.com", Header: "x-api-key", SecretEnv: "ANTHROPIC_API_KEY",
			BaseURLEnv: "ANTHROPIC_BASE_URL"},
		continueSession: claudeContinue,
	},
	{
		Name:    domain.ReportFromCodex,
		Command: `codex exec --json --sandbox workspace-write - < "$AZOLLA_INPUT_FILE"`,
		Output:  Stdout,
		Parse:   ParseCodex,
		Egress:  []string{"api.openai.com"},
		Key: &ModelKey{Host: "api.openai.com", Header: "Authorization", Format: "Bearer {secret}",
			SecretEnv: "OPENAI_API_KEY", BaseURLEnv: "OPENAI_BASE_URL", BasePath: "/v1"},
	},
	{
		Name:    domain.ReportFromAider,
		Command: `aider --message-file "$AZOLLA_INPUT_FILE" --yes-always --no-pretty --no-auto-commits --no-gitignore`,
		Output:  Stdout,
		Parse:   ParseAider,
		// aider speaks to whichever model it is told; its key is passed.
		Egress: []string{"api.openai.com", "api.anthropic.com"},
	},
}

// Presets returns every preset, sorted by name.
func Presets() []Preset {
	ps := slices.Clone(presets)
	slices.SortFunc(ps, func(a, b Preset) int { return strings.Compare(string(a.Name), string(b.Name)) })
	return ps
}

// LookupPreset returns the preset called name.
func LookupPreset(name string) (Preset, error) {
	for _, p := range presets {
		if string(p.Name) == name {
			return p, nil
		}
	}
	names := make([]string, 0, len(presets))
	for _, p := range Presets() {
		names = append(names, string(p.Name))
	}
	return Preset{}, fmt.Errorf("unknown agent preset %q (valid presets: %s)", name, strings.Join(names, ", "))
}

// CommandLine returns the command line to run, with the agent's own cap
// set to budgetUSD when the preset has one and a budget is known (nil: no
// budget). A budget must be a finite number above zero: a run with nothing
// left to spend is not to be started at all.
func (p Preset) CommandLine(budgetUSD *float64) (string, error) {
	if budgetUSD == nil || p.BudgetFlag == "" {
		return p.Command, nil
	}
	b := *budgetUSD
	if math.IsNaN(b) || math.IsInf(b, 0) || b <= 0 {
		return "", fmt.Errorf("preset %s: budget %v is not a positive number of dollars", p.Name, b)
	}
	return p.Command + " " + p.BudgetFlag + " " + strconv.FormatFloat(b, 'f', -1, 64), nil
}
