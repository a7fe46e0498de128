package patchgen

// This file is the openai generator's client, written by hand on purpose.
// github.com/openai/openai-go (v3: the module proxy serves it and it builds
// with our Go) was weighed and not taken. Its retries can be counted
// (option.WithMaxRetries) but not steered: it sleeps on its own timer, with
// no clock a test can stand in for; it measures a Retry-After against a
// fixed cap (option.WithMaxRetryDelay), not against ctx's deadline, so a
// wait past the run's budget is slept until ctx ends and comes back as a
// bare context error; and it has no cap on calls in flight per endpoint.
// Those three are what rate-limited calls need here (openai_retry.go,
// openai_slots.go). With its retries off, what is left is request and
// response types of which we read a handful of fields, at the price of its
// module graph (Azure and AWS SDKs among it) in ours.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/executor/proc"
)

// maxResponseBytes bounds the body read from the endpoint. A reply past it
// is no patch anyone would apply, and reading on would only hold memory.
const maxResponseBytes = 16 << 20

// maxSnippetBytes bounds the quotes of bodies and replies in errors and
// notes.
const maxSnippetBytes = 512

// systemPrompt frames the request: the user message (GenerationInput) says
// what to change and how the diff must look.
const systemPrompt = "You are a careful software engineer who answers change requests with patches. " +
	"You reply with exactly one unified diff, in a single ```diff fenced block, and nothing else."

// Names of the request field that carries the completion token limit,
// OpenAIOptions.TokenParam.
const (
	// TokenParamMaxCompletionTokens is the field OpenAI's newer models
	// require; they refuse max_tokens.
	TokenParamMaxCompletionTokens = "max_completion_tokens"
	// TokenParamMaxTokens is the older field, which some OpenAI-compatible
	// servers still need.
	TokenParamMaxTokens = "max_tokens"
)

// DefaultOpenAIMaxTokens is the completion token limit when
// OpenAIOptions.MaxTokens is zero: room for a sizeable diff and, on
// reasoning models, which count their reasoning against it, for the
// reasoning before it.
const DefaultOpenAIMaxTokens = 16384

// OpenAIOptions configures an OpenAI generator.
type OpenAIOptions struct {
	// BaseURL is the API root, e.g. https://api.openai.com/v1; any
	// OpenAI-compatible server will do. Required.
	BaseURL string
	// Model is the model name sent with each request. Required.
	Model string
	// APIKey is sent as a bearer token when set.
	APIKey string
	// HTTPClient defaults to http.DefaultClient. Its timeout, if any, adds
	// to the budget that ctx carries.
	HTTPClient *http.Client
	// TokenParam names the field MaxTokens is sent in:
	// TokenParamMaxCompletionTokens (also when empty) or TokenParamMaxTokens.
	TokenParam string
	// MaxTokens bounds the completion; 0 means DefaultOpenAIMaxTokens.
	MaxTokens int
	// Temperature is sent when set.
	Temperature *float64
	// MaxConcurrency caps the requests in flight to BaseURL across the
	// process; 0 means DefaultOpenAIMaxConcurrency. The first generator
	// built for a BaseURL sets the cap for all.
	MaxConcurrency int
	// MaxAttempts bounds the requests of one Generate when the endpoint
	// answers 429 or 503; 0 means DefaultOpenAIMaxAttempts.
	MaxAttempts int
	// Sleep waits d, or until ctx ends, before a retry; nil means a timer.
	// Tests pass one that records the wait and returns at once.
	Sleep func(ctx context.Context, d time.Duration) error
}

// OpenAI asks a chat completions endpoint for a patch, with GenerationInput
// as the user message, and takes the diff out of the reply (ExtractDiff).
//
// It waits for one of the endpoint's slots (MaxConcurrency) before each
// request and frees it once the answer is read. A 429 or 503 is retried
// after the Retry-After it names, or a jittered exponential backoff, up to
// MaxAttempts requests; a wait that would end after ctx's deadline is not
// started, and Generate returns ErrRetryPastBudget instead.
//
// An OpenAI is immutable and safe for concurrent use.
type OpenAI struct {
	url         string
	model       string
	apiKey      string
	client      *http.Client
	tokenParam  string
	maxTokens   int
	temperature *float64
	slots       chan struct{}
	maxAttempts int
	sleep       func(ctx context.Context, d time.Duration) error
}

var _ Generator = (*OpenAI)(nil)

// NewOpenAI returns an OpenAI generator, or an error if BaseURL or Model is
// missing, TokenParam is unknown or a limit is negative.
func NewOpenAI(o OpenAIOptions) (*OpenAI, error) {
	base := strings.TrimRight(strings.TrimSpace(o.BaseURL), "/")
	if base == "" {
		return nil, errors.New("openai generator: no base URL configured")
	}
	if strings.TrimSpace(o.Model) == "" {
		return nil, errors.New("openai generator: no model configured")
	}
	if o.TokenParam == "" {
		o.TokenParam = TokenParamMaxCompletionTokens
	}
	if o.TokenParam != TokenParamMaxCompletionTokens && o.TokenParam != TokenParamMaxTokens {
		return nil, fmt.Errorf("openai generator: token parameter %q is neither %s nor %s",
			o.TokenParam, TokenParamMaxCompletionTokens, TokenParamMaxTokens)
	}
	if o.MaxTokens < 0 || o.MaxConcurrency < 0 || o.MaxAttempts < 0 {
		return nil, fmt.Errorf("openai generator: max tokens %d, max concurrency %d and max attempts %d must not be negative",
			o.MaxTokens, o.MaxConcurrency, o.MaxAttempts)
	}
	g := &OpenAI{url: base + "/chat/completions", model: o.Model, apiKey: o.APIKey, client: o.HTTPClient,
		tokenParam: o.TokenParam, maxTokens: cmp.Or(o.MaxTokens, DefaultOpenAIMaxTokens),
		slots:       slotsFor(base, cmp.Or(o.MaxConcurrency, DefaultOpenAIMaxConcurrency)),
		maxAttempts: cmp.Or(o.MaxAttempts, DefaultOpenAIMaxAttempts), sleep: o.Sleep}
	if g.client == nil {
		g.client = http.DefaultClient
	}
	if g.sleep == nil {
		g.sleep = sleepCtx
	}
	if o.Temperature != nil {
		t := *o.Temperature
		g.temperature = &t
	}
	return g, nil
}

// Name returns OpenAIName.
func (*OpenAI) Name() string { return OpenAIName }

// KeepsWorktree is true: OpenAI only talks to its endpoint.
func (*OpenAI) KeepsWorktree() bool { return true }

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model               string        `json:"model"`
	Messages            []chatMessage `json:"messages"`
	MaxCompletionTokens int           `json:"max_completion_tokens,omitempty"`
	MaxTokens           int           `json:"max_tokens,omitempty"`
	Temperature         *float64      `json:"temperature,omitempty"`
	Seed                *int          `json:"seed,omitempty"`
}

type chatResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content string `json:"content"`
			Refusal string `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		TotalTokens         int `json:"total_tokens"`
		PromptTokensDetails *struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

// chatReply is one answer of the endpoint, read whole.
type chatReply struct {
	status string
	code   int
	header http.Header
	body   []byte
}

// ReadsHouseRules says the prompt carries the repository's AGENTS.md.
func (g *OpenAI) ReadsHouseRules() bool { return true }

// Generate asks the endpoint for a patch for in.
func (g *OpenAI) Generate(ctx context.Context, in Input) (Output, error) {
	cr, attempts, waited, err := g.complete(ctx, systemPrompt, withHouseRules(GenerationInput(in), in.HouseRules),
		g.sampling(in.Candidate))
	if err != nil {
		return Output{}, fmt.Errorf("openai generator: objective %s: model %s: %w", in.ObjectiveID, g.model, err)
	}
	out := g.output(cr)
	if in.Candidate > 1 {
		out.Notes += "\n" + g.sampling(in.Candidate).String()
	}
	if attempts > 1 {
		out.Notes += fmt.Sprintf("\nretried: %d requests, %s waited for the endpoint", attempts, waited)
	}
	return out, nil
}

// complete asks the endpoint for one chat completion of a system and a
// user message, with g's model and token limit and s's sampling, in one of
// the endpoint's slots. A 429 or 503 is asked again after its Retry-After
// or a jittered backoff, up to g's attempts, and never past ctx's deadline
// (ErrRetryPastBudget). It returns the decoded answer, which has at least
// one choice, how many requests it took and how long it waited between
// them.
func (g *OpenAI) complete(ctx context.Context, system, user string, s sampling) (cr chatResponse, attempts int, waited time.Duration, err error) {
	req := chatRequest{Model: g.model, Temperature: s.temperature, Seed: s.seed,
		Messages: []chatMessage{{Role: "system", Content: system}, {Role: "user", Content: user}}}
	if g.tokenParam == TokenParamMaxTokens {
		req.MaxTokens = g.maxTokens
	} else {
		req.MaxCompletionTokens = g.maxTokens
	}
	body, err := json.Marshal(req)
	if err != nil {
		return cr, 0, 0, fmt.Errorf("encode request: %w", err)
	}
	for attempt := 1; ; attempt++ {
		r, err := g.post(ctx, body)
		if err != nil {
			return cr, attempt, waited, err
		}
		if r.code >= 200 && r.code <= 299 {
			cr, err := g.decode(r.body)
			return cr, attempt, waited, err
		}
		if !retryable(r.code) {
			return cr, attempt, waited, fmt.Errorf("POST %s: %s; body: %s", g.url, r.status, g.snippet(r.body))
		}
		if attempt >= g.maxAttempts {
			return cr, attempt, waited, fmt.Errorf("POST %s: %s on each of %d attempts; body: %s", g.url, r.status, attempt,
				g.snippet(r.body))
		}
		wait, asked := parseRetryAfter(r.header.Get("Retry-After"), time.Now())
		if !asked {
			wait = backoff(attempt, jitter())
		}
		if deadline, ok := ctx.Deadline(); ok && time.Now().Add(wait).After(deadline) {
			left := max(time.Until(deadline), 0).Round(time.Millisecond)
			if asked {
				return cr, attempt, waited, fmt.Errorf("POST %s: %s: the endpoint asked to wait %s (Retry-After: %s), longer than the %s left of the run's budget: %w",
					g.url, r.status, wait, r.header.Get("Retry-After"), left, ErrRetryPastBudget)
			}
			return cr, attempt, waited, fmt.Errorf("POST %s: %s: the next attempt, after a backoff of %s, would start past the %s left of the run's budget: %w",
				g.url, r.status, wait.Round(time.Millisecond), left, ErrRetryPastBudget)
		}
		if err := g.sleep(ctx, wait); err != nil {
			return cr, attempt, waited, fmt.Errorf("wait %s to retry after %s from %s: %w", wait, r.status, g.url, g.stopped(ctx, err))
		}
		waited += wait
	}
}

// post sends body in one of the endpoint's slots and reads the answer whole,
// so that the slot is free again before any wait for a retry.
func (g *OpenAI) post(ctx context.Context, body []byte) (chatReply, error) {
	if err := acquire(ctx, g.slots); err != nil {
		return chatReply{}, fmt.Errorf("wait for a free slot of %s: %w", g.url, g.stopped(ctx, err))
	}
	defer func() { <-g.slots }()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.url, bytes.NewReader(body))
	if err != nil {
		return chatReply{}, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if g.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+g.apiKey)
	}
	resp, err := g.client.Do(req)
	if err != nil {
		return chatReply{}, fmt.Errorf("send request: %w", g.stopped(ctx, err)) // the error names the URL
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return chatReply{}, fmt.Errorf("read response from %s: %w", g.url, g.stopped(ctx, err))
	}
	return chatReply{status: resp.Status, code: resp.StatusCode, header: resp.Header, body: raw}, nil
}

// decode reads a successful answer.
func (g *OpenAI) decode(raw []byte) (chatResponse, error) {
	var cr chatResponse
	if len(raw) > maxResponseBytes {
		return cr, fmt.Errorf("response from %s exceeds %d bytes", g.url, maxResponseBytes)
	}
	if err := json.Unmarshal(raw, &cr); err != nil {
		return cr, fmt.Errorf("decode response from %s: %w (body: %s)", g.url, err, g.snippet(raw))
	}
	if len(cr.Choices) == 0 {
		return cr, fmt.Errorf("response from %s has no choices (body: %s)", g.url, g.snippet(raw))
	}
	return cr, nil
}

// output takes the patch out of the first choice; notes say what the
// endpoint reported, and without a patch, what the reply began with.
func (g *OpenAI) output(cr chatResponse) Output {
	choice := cr.Choices[0]
	model := g.model
	if cr.Model != "" && cr.Model != g.model {
		model = fmt.Sprintf("%s (served as %s)", g.model, cr.Model)
	}
	notes := "model " + model
	if choice.FinishReason != "" {
		notes += ", finish_reason " + choice.FinishReason
	}
	content := choice.Message.Content
	patch := ExtractDiff(content)
	switch {
	case patch != "":
		notes += fmt.Sprintf("; patch taken from the reply (%d bytes)", len(patch))
		if choice.FinishReason == "length" {
			notes += "; the reply hit the token limit, so the patch may be cut short"
		}
	case choice.Message.Refusal != "":
		notes += "; no patch: the model refused: " + g.snippet([]byte(choice.Message.Refusal))
	case strings.TrimSpace(content) == "":
		notes += "; no patch: the reply is empty"
	default:
		notes += fmt.Sprintf("; no patch: the reply (%d bytes) holds no unified diff; it begins: %s",
			len(content), g.snippet([]byte(content)))
	}
	out := Output{Patch: patch, Notes: notes}
	if out.Usage = g.usage(cr); out.Usage != nil {
		out.Notes += "\n" + out.Usage.String()
	}
	return out
}

// stopped prefers ctx's cause to the transport's error once ctx has ended:
// net/http reports only ctx.Err(), which would lose why the run stopped.
func (g *OpenAI) stopped(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil {
		return fmt.Errorf("%w (%w)", cause, err)
	}
	return err
}

// snippet quotes at most maxSnippetBytes of b, valid UTF-8 on one line, with
// the API key blanked: an endpoint may echo it back in an error. It is
// redacted before the cut, so that no prefix of it survives either.
func (g *OpenAI) snippet(b []byte) string {
	s, _ := proc.Sanitize(b)
	if g.apiKey != "" {
		s = strings.ReplaceAll(s, g.apiKey, "[redacted]")
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxSnippetBytes {
		s = proc.CutAtRune(s, maxSnippetBytes) + "…"
	}
	return s
}
