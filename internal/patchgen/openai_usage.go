package patchgen

import "fmt"

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
