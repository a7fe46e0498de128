package domain

// ReportSource says who wrote a run report.
type ReportSource string

// The writers of a report: the executor itself, or one preset's parser.
const (
	ReportFromExecutor   ReportSource = "executor"
	ReportFromClaudeCode ReportSource = "claude-code"
	ReportFromCodex      ReportSource = "codex"
	ReportFromAider      ReportSource = "aider"
)

// RunReport mirrors run_report.schema.json: what an agent run says of
// itself (model, cost, tokens, summary, transcript).
type RunReport struct {
	// Model is the model that did the work, "" when unknown.
	Model string `json:"model,omitempty"`
	// CostUSD is the run's cost in dollars; nil is unknown, which is not
	// the same as free.
	CostUSD *float64 `json:"cost_usd,omitempty"`
	// Tokens is nil when the run reported no token counts.
	Tokens *Tokens `json:"tokens,omitempty"`
	// Turns is the number of agent turns, 0 when unknown.
	Turns int64 `json:"turns,omitempty"`
	// Summary is the agent's short account of the run.
	Summary string `json:"summary,omitempty"`
	// Transcript is inline text or a file under the artifact directory.
	Transcript *RunTranscript `json:"transcript,omitempty"`
	// Question is what the agent asks a human before it can go on: the
	// run ends as QUESTION.
	Question string `json:"question,omitempty"`
	// SessionID is the agent's own session or thread id.
	SessionID string `json:"session_id,omitempty"`
	// Source says who wrote the report.
	Source ReportSource `json:"source,omitempty"`
}

// Tokens counts a run's tokens. Input excludes the tokens read from or
// written to a prompt cache, which are counted on their own.
type Tokens struct {
	Input      int64 `json:"input,omitempty"`
	Output     int64 `json:"output,omitempty"`
	CacheRead  int64 `json:"cache_read,omitempty"`
	CacheWrite int64 `json:"cache_write,omitempty"`
}

// Transcript is exactly one of Text and Path.
type RunTranscript struct {
	// Text is the transcript inline.
	Text string `json:"text,omitempty"`
	// Path is a file relative to $AZOLLA_ARTIFACT_DIR, never outside it.
	Path string `json:"path,omitempty"`
}
