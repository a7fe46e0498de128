package patchgen_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/patchgen"
)

func TestOpenAIChat_SendsBothMessagesAndReturnsTheReplyWithUsage(t *testing.T) {
	t.Parallel()
	srv := newChatServer(t, completion(`{"proposals":[],"skipped":[]}`, "stop"))
	g := newOpenAI(t, srv.URL, "sk-chat-test-key")

	reply, err := g.Chat(t.Context(), "be brief", "the document")
	require.NoError(t, err)
	require.Equal(t, patchgen.ChatReply{Content: `{"proposals":[],"skipped":[]}`, FinishReason: "stop",
		Model: "patcher-2025-01-01", Requests: 1,
		Usage: &patchgen.Usage{Model: "patcher-2025-01-01", PromptTokens: 10, CompletionTokens: 20}}, reply)
	r, body := <-srv.requests, <-srv.bodies
	require.Equal(t, "Bearer sk-chat-test-key", r.Header.Get("Authorization"))
	require.Equal(t, "patcher", body["model"])
	require.EqualValues(t, 4096, body["max_completion_tokens"])
	require.NotContains(t, body, "max_tokens")
	require.Equal(t, []any{map[string]any{"role": "system", "content": "be brief"},
		map[string]any{"role": "user", "content": "the document"}}, body["messages"])
}

func TestOpenAIChat_HonoursRetryAfterAndTheTokenParameter(t *testing.T) {
	t.Parallel()
	srv := newChatServer(t, refuseFirst(1, http.StatusTooManyRequests, map[string]string{"Retry-After": "2"}))
	var s sleeper
	g := newLimitedOpenAI(t, patchgen.OpenAIOptions{BaseURL: srv.URL, Sleep: s.Sleep,
		TokenParam: patchgen.TokenParamMaxTokens, MaxTokens: 100})
	reply, err := g.Chat(t.Context(), "s", "u")
	require.NoError(t, err)
	require.Equal(t, 2, reply.Requests)
	require.Equal(t, 2*time.Second, reply.Waited)
	require.Equal(t, []time.Duration{2 * time.Second}, s.Slept())
	<-srv.bodies
	body := <-srv.bodies
	require.EqualValues(t, 100, body["max_tokens"])
	require.NotContains(t, body, "max_completion_tokens")
}

func TestOpenAIChat_ARetryPastTheBudgetIsNotWaited(t *testing.T) {
	t.Parallel()
	srv := newChatServer(t, refuseFirst(5, http.StatusServiceUnavailable, map[string]string{"Retry-After": "3600"}))
	var s sleeper
	g := newLimitedOpenAI(t, patchgen.OpenAIOptions{BaseURL: srv.URL, Sleep: s.Sleep})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	_, err := g.Chat(ctx, "s", "u")
	require.ErrorIs(t, err, patchgen.ErrRetryPastBudget)
	require.Empty(t, s.Slept())
	require.Len(t, srv.requests, 1)
}

func TestOpenAIChat_ANonRetryableStatusIsAnErrorWithoutTheKey(t *testing.T) {
	t.Parallel()
	srv := newChatServer(t, func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"error":"bad key sk-chat-test-key"}`, http.StatusUnauthorized)
	})
	g := newOpenAI(t, srv.URL, "sk-chat-test-key")
	_, err := g.Chat(t.Context(), "s", "u")
	require.Error(t, err)
	require.False(t, errors.Is(err, patchgen.ErrRetryPastBudget))
	require.Contains(t, err.Error(), "401")
	require.NotContains(t, err.Error(), "sk-chat-test-key")
}
