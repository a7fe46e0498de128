package patchgen

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// ChatReply is one chat completion: the first choice's text and what the
// endpoint said about it.
type ChatReply struct {
	// Content is the reply's text; Refusal is set when the model refused.
	Content, Refusal string
	// FinishReason is the endpoint's ("stop", "length", …), "" if it gave none.
	FinishReason string
	// Model is the model that answered as the endpoint named it, else the
	// one asked for.
	Model string
	// Usage is nil when the endpoint reported none.
	Usage *Usage
	// Requests is how many requests it took (more than one after 429 or
	// 503), Waited how long was spent waiting between them.
	Requests int
	Waited   time.Duration
}

// Chat asks the endpoint for one completion of a system and a user message,
// with g's model, token limit and temperature, in one of the endpoint's
// slots and with the retries of Generate: a 429 or 503 is asked again after
// its Retry-After or a jittered backoff, up to the attempts configured, and
// never past ctx's deadline (ErrRetryPastBudget). It is for callers other
// than the patch generator (the triage route) that want the reply's text.
func (g *OpenAI) Chat(ctx context.Context, system, user string) (ChatReply, error) {
	fail := func(format string, args ...any) (ChatReply, error) {
		return ChatReply{}, fmt.Errorf("openai chat: model %s: "+format, append([]any{g.model}, args...)...)
	}
	req := chatRequest{Model: g.model, Messages: []chatMessage{{Role: "system", Content: system},
		{Role: "user", Content: user}}, Temperature: g.temperature}
	if g.tokenParam == TokenParamMaxTokens {
		req.MaxTokens = g.maxTokens
	} else {
		req.MaxCompletionTokens = g.maxTokens
	}
	body, err := json.Marshal(req)
	if err != nil {
		return fail("encode request: %w", err)
	}
	var waited time.Duration
	for attempt := 1; ; attempt++ {
		r, err := g.post(ctx, body)
		if err != nil {
			return fail("%w", err)
		}
		if r.code >= 200 && r.code <= 299 {
			reply, err := g.chatReply(r.body)
			if err != nil {
				return fail("%w", err)
			}
			reply.Requests, reply.Waited = attempt, waited
			return reply, nil
		}
		if !retryable(r.code) {
			return fail("POST %s: %s; body: %s", g.url, r.status, g.snippet(r.body))
		}
		if attempt >= g.maxAttempts {
			return fail("POST %s: %s on each of %d attempts; body: %s", g.url, r.status, attempt, g.snippet(r.body))
		}
		wait, asked := parseRetryAfter(r.header.Get("Retry-After"), time.Now())
		if !asked {
			wait = backoff(attempt, jitter())
		}
		if deadline, ok := ctx.Deadline(); ok && time.Now().Add(wait).After(deadline) {
			left := max(time.Until(deadline), 0).Round(time.Millisecond)
			return fail("POST %s: %s: the next attempt, in %s, would start past the %s left of the budget: %w",
				g.url, r.status, wait.Round(time.Millisecond), left, ErrRetryPastBudget)
		}
		if err := g.sleep(ctx, wait); err != nil {
			return fail("wait %s to retry after %s from %s: %w", wait, r.status, g.url, g.stopped(ctx, err))
		}
		waited += wait
	}
}

// chatReply reads a successful answer's first choice.
func (g *OpenAI) chatReply(raw []byte) (ChatReply, error) {
	if len(raw) > maxResponseBytes {
		return ChatReply{}, fmt.Errorf("response from %s exceeds %d bytes", g.url, maxResponseBytes)
	}
	var cr chatResponse
	if err := json.Unmarshal(raw, &cr); err != nil {
		return ChatReply{}, fmt.Errorf("decode response from %s: %w (body: %s)", g.url, err, g.snippet(raw))
	}
	if len(cr.Choices) == 0 {
		return ChatReply{}, fmt.Errorf("response from %s has no choices (body: %s)", g.url, g.snippet(raw))
	}
	c := cr.Choices[0]
	reply := ChatReply{Content: c.Message.Content, Refusal: c.Message.Refusal, FinishReason: c.FinishReason,
		Model: cmp.Or(cr.Model, g.model)}
	if u := cr.Usage; u != nil {
		reply.Usage = &Usage{Model: reply.Model, PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens}
		if u.PromptTokensDetails != nil {
			reply.Usage.CachedPromptTokens = u.PromptTokensDetails.CachedTokens
		}
	}
	return reply, nil
}
