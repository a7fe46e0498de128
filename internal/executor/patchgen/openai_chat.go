package patchgen

import (
	"cmp"
	"context"
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
	cr, attempts, waited, err := g.complete(ctx, system, user, g.sampling(0))
	if err != nil {
		return ChatReply{}, fmt.Errorf("openai chat: model %s: %w", g.model, err)
	}
	reply := g.chatReply(cr)
	reply.Requests, reply.Waited = attempts, waited
	return reply, nil
}

// chatReply reads a successful answer's first choice.
func (g *OpenAI) chatReply(cr chatResponse) ChatReply {
	c := cr.Choices[0]
	return ChatReply{Content: c.Message.Content, Refusal: c.Message.Refusal, FinishReason: c.FinishReason,
		Model: cmp.Or(cr.Model, g.model), Usage: g.usage(cr)}
}
