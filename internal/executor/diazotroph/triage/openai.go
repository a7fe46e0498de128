package triage

import (
	"context"
	"fmt"

	"github.com/azolla/azolla/internal/executor/patchgen"
)

// OpenAI is the openai route: one chat completion of an OpenAI-compatible
// endpoint, Instructions as the system message and the input document as
// the user message, through the patch generator's client (its slots per
// endpoint, Retry-After and token parameter). The usage the endpoint
// reports becomes the run's report.
type OpenAI struct {
	client *patchgen.OpenAI
}

var _ Model = (*OpenAI)(nil)

// NewOpenAI returns the openai route asking client.
func NewOpenAI(client *patchgen.OpenAI) *OpenAI { return &OpenAI{client: client} }

// Route returns RouteOpenAI.
func (*OpenAI) Route() string { return RouteOpenAI }

// Answer asks the endpoint for in's proposals.
func (o *OpenAI) Answer(ctx context.Context, _ Input, doc string) (Answer, error) {
	if o.client == nil {
		return Answer{}, fmt.Errorf("openai route: no endpoint configured")
	}
	r, err := o.client.Chat(ctx, Instructions, doc)
	if err != nil {
		return Answer{}, fmt.Errorf("openai route: %w", err)
	}
	note := "model " + r.Model
	if r.FinishReason != "" {
		note += ", finish_reason " + r.FinishReason
	}
	if r.Requests > 1 {
		note += fmt.Sprintf("; %d requests, %s waited for the endpoint", r.Requests, r.Waited)
	}
	a := Answer{Text: r.Content, Notes: []string{note}}
	if u := r.Usage; u != nil {
		a.Notes = append(a.Notes, u.String())
		rep := u.Report()
		a.Report = &rep
	}
	if r.Refusal != "" {
		return a, fmt.Errorf("openai route: the model refused: %s", r.Refusal)
	}
	return a, nil
}
