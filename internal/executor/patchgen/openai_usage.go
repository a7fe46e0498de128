package patchgen

import (
	"cmp"
	"fmt"

	"github.com/azolla/azolla/internal/domain"
)

// Usage is what a model endpoint reported spending on the answer a
// generation used, kept for the run report; a zero count was not reported.
type Usage struct {
	// Model is the model that answered, as the endpoint named it; it may be
	// a dated snapshot of the one asked for.
	Model            string
	PromptTokens     int
	CompletionTokens int
	// CachedPromptTokens is the part of PromptTokens served from the
	// endpoint's prompt cache (usage.prompt_tokens_details.cached_tokens).
	CachedPromptTokens int
}

// String is the one line the notes carry.
func (u Usage) String() string {
	s := fmt.Sprintf("usage: model %s, %d prompt / %d completion tokens", u.Model, u.PromptTokens, u.CompletionTokens)
	if u.CachedPromptTokens > 0 {
		s += fmt.Sprintf(" (%d prompt tokens cached)", u.CachedPromptTokens)
	}
	return s
}

// Report is u as a run report, the executor's: the endpoint says tokens,
// not dollars. Input counts the prompt tokens not served from the cache,
// which CacheRead counts.
func (u Usage) Report() domain.RunReport {
	return domain.RunReport{Model: u.Model, Source: domain.ReportFromExecutor, Tokens: &domain.Tokens{
		Input: int64(max(u.PromptTokens-u.CachedPromptTokens, 0)), Output: int64(u.CompletionTokens),
		CacheRead: int64(u.CachedPromptTokens)}}
}

// usage is what a successful answer reported spending, nil when it
// reported nothing; its model is the one that answered, else the one asked.
func (g *OpenAI) usage(cr chatResponse) *Usage {
	u := cr.Usage
	if u == nil {
		return nil
	}
	out := &Usage{Model: cmp.Or(cr.Model, g.model), PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens}
	if u.PromptTokensDetails != nil {
		out.CachedPromptTokens = u.PromptTokensDetails.CachedTokens
	}
	return out
}
