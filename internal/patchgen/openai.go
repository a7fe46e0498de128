package patchgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/azolla/azolla/internal/proc"
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
	// MaxTokens is sent as max_tokens when positive. Some newer OpenAI
	// models refuse that field; leave it zero for them.
	MaxTokens int
	// Temperature is sent when set.
	Temperature *float64
}

// OpenAI asks a chat completions endpoint for a patch, with GenerationInput
// as the user message, and takes the diff out of the reply (ExtractDiff).
//
// An OpenAI is immutable and safe for concurrent use.
type OpenAI struct {
	url         string
	model       string
	apiKey      string
	client      *http.Client
	maxTokens   int
	temperature *float64
}

var _ Generator = (*OpenAI)(nil)

// NewOpenAI returns an OpenAI generator, or an error if BaseURL or Model is
// missing.
func NewOpenAI(o OpenAIOptions) (*OpenAI, error) {
	base := strings.TrimRight(strings.TrimSpace(o.BaseURL), "/")
	if base == "" {
		return nil, errors.New("openai generator: no base URL configured")
	}
	if strings.TrimSpace(o.Model) == "" {
		return nil, errors.New("openai generator: no model configured")
	}
	client := o.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	g := &OpenAI{url: base + "/chat/completions", model: o.Model, apiKey: o.APIKey, client: client, maxTokens: o.MaxTokens}
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
	Model       string        `json:"model"`
	Messages    []chatMessage `json:"messages"`
	MaxTokens   int           `json:"max_tokens,omitempty"`
	Temperature *float64      `json:"temperature,omitempty"`
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
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
}

// Generate asks the endpoint for a patch for in.
func (g *OpenAI) Generate(ctx context.Context, in Input) (Output, error) {
	fail := func(format string, args ...any) (Output, error) {
		return Output{}, fmt.Errorf("openai generator: objective %s: model %s: "+format,
			append([]any{in.ObjectiveID, g.model}, args...)...)
	}
	body, err := json.Marshal(chatRequest{
		Model: g.model,
		Messages: []chatMessage{
			{Role: "system", Content: systemPrompt},
			{Role: "user", Content: GenerationInput(in)},
		},
		MaxTokens:   g.maxTokens,
		Temperature: g.temperature,
	})
	if err != nil {
		return fail("encode request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.url, bytes.NewReader(body))
	if err != nil {
		return fail("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if g.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+g.apiKey)
	}

	resp, err := g.client.Do(req)
	if err != nil {
		return fail("send request: %w", g.stopped(ctx, err)) // the error names the URL
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return fail("read response from %s: %w", g.url, g.stopped(ctx, err))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fail("POST %s: %s; body: %s", g.url, resp.Status, g.snippet(raw))
	}
	if len(raw) > maxResponseBytes {
		return fail("response from %s exceeds %d bytes", g.url, maxResponseBytes)
	}
	var cr chatResponse
	if err := json.Unmarshal(raw, &cr); err != nil {
		return fail("decode response from %s: %w (body: %s)", g.url, err, g.snippet(raw))
	}
	if len(cr.Choices) == 0 {
		return fail("response from %s has no choices (body: %s)", g.url, g.snippet(raw))
	}
	return g.output(cr), nil
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
	if u := cr.Usage; u != nil {
		notes += fmt.Sprintf(", tokens: %d prompt + %d completion = %d", u.PromptTokens, u.CompletionTokens, u.TotalTokens)
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
	return Output{Patch: patch, Notes: notes}
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
