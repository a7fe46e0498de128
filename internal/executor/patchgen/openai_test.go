package patchgen_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/patchgen"
)

const testKey = "sk-test-secret-0123456789"

// chatServer is an OpenAI-compatible endpoint whose handler the test
// supplies; requests holds what it was sent.
type chatServer struct {
	*httptest.Server
	requests chan *http.Request
	bodies   chan map[string]any
}

func newChatServer(t *testing.T, reply func(w http.ResponseWriter, r *http.Request)) *chatServer {
	t.Helper()
	s := &chatServer{requests: make(chan *http.Request, 10), bodies: make(chan map[string]any, 10)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.requests <- r
		s.bodies <- body
		reply(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// completion writes a chat completion whose one choice says content.
func completion(content, finishReason string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "model": "patcher-2025-01-01",
			"choices": []any{map[string]any{
				"index": 0, "finish_reason": finishReason,
				"message": map[string]any{"role": "assistant", "content": content},
			}},
			"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30},
		})
	}
}

func newOpenAI(t *testing.T, baseURL, key string) *patchgen.OpenAI {
	t.Helper()
	temp := 0.2
	g, err := patchgen.NewOpenAI(patchgen.OpenAIOptions{
		BaseURL: baseURL, Model: "patcher", APIKey: key, MaxTokens: 4096, Temperature: &temp,
	})
	require.NoError(t, err)
	return g
}

func TestOpenAI_SendsTheInputAndTakesTheDiffFromTheReply(t *testing.T) {
	t.Parallel()
	srv := newChatServer(t, completion("Here is the change:\n\n```diff\n"+helloDiff+"```\n", "stop"))
	g := newOpenAI(t, srv.URL+"/v1/", testKey) // the trailing slash is tolerated
	require.Equal(t, "openai", g.Name())
	in := newInput("/work/tree")

	out, err := g.Generate(t.Context(), in)
	require.NoError(t, err)
	require.Equal(t, helloDiff, out.Patch)
	require.Equal(t, fmt.Sprintf("model patcher (served as patcher-2025-01-01), finish_reason stop; "+
		"patch taken from the reply (%d bytes)\nusage: model patcher-2025-01-01, 10 prompt / 20 completion tokens", len(helloDiff)), out.Notes)
	require.Equal(t, &patchgen.Usage{Model: "patcher-2025-01-01", PromptTokens: 10, CompletionTokens: 20}, out.Usage)

	r := <-srv.requests
	require.Equal(t, http.MethodPost, r.Method)
	require.Equal(t, "/v1/chat/completions", r.URL.Path)
	require.Equal(t, "Bearer "+testKey, r.Header.Get("Authorization"))
	require.Equal(t, "application/json", r.Header.Get("Content-Type"))
	body := <-srv.bodies
	require.Equal(t, "patcher", body["model"])
	require.EqualValues(t, 4096, body["max_completion_tokens"])
	require.NotContains(t, body, "max_tokens", "newer models refuse it")
	require.EqualValues(t, 0.2, body["temperature"])
	messages, ok := body["messages"].([]any)
	require.True(t, ok, "messages: %v", body["messages"])
	require.Len(t, messages, 2)
	require.Equal(t, "system", messages[0].(map[string]any)["role"])
	user := messages[1].(map[string]any)
	require.Equal(t, "user", user["role"])
	require.Equal(t, patchgen.GenerationInput(in), user["content"])
	require.Contains(t, user["content"], in.Prompt)
}

func TestOpenAI_OptionalFieldsAreLeftOut(t *testing.T) {
	t.Parallel()
	srv := newChatServer(t, completion("```diff\n"+helloDiff+"```", ""))
	g, err := patchgen.NewOpenAI(patchgen.OpenAIOptions{BaseURL: srv.URL, Model: "patcher"})
	require.NoError(t, err)
	out, err := g.Generate(t.Context(), newInput(""))
	require.NoError(t, err)
	require.Equal(t, helloDiff, out.Patch)
	require.Empty(t, (<-srv.requests).Header.Values("Authorization"), "no key, no header")
	body := <-srv.bodies
	require.EqualValues(t, patchgen.DefaultOpenAIMaxTokens, body["max_completion_tokens"])
	require.NotContains(t, body, "max_tokens")
	require.NotContains(t, body, "temperature")
}

func TestOpenAI_ReplyWithoutADiffIsAnEmptyPatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, content, finishReason, wantNotes string
	}{
		{"prose", "I cannot see the file, so I will not guess.", "stop", "; no patch: the reply (43 bytes) holds no unified diff; it begins: I cannot see"},
		{"empty", "", "stop", "; no patch: the reply is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newChatServer(t, completion(tt.content, tt.finishReason))
			out, err := newOpenAI(t, srv.URL, testKey).Generate(t.Context(), newInput(""))
			require.NoError(t, err, "the model answered: that is an outcome, not a failure")
			require.Empty(t, out.Patch)
			require.Contains(t, out.Notes, tt.wantNotes)
		})
	}
}

func TestOpenAI_ReplyCutAtTheTokenLimitSaysSo(t *testing.T) {
	t.Parallel()
	srv := newChatServer(t, completion("```diff\n"+helloDiff, "length"))
	out, err := newOpenAI(t, srv.URL, testKey).Generate(t.Context(), newInput(""))
	require.NoError(t, err)
	require.Equal(t, helloDiff, out.Patch)
	require.Contains(t, out.Notes, "finish_reason length")
	require.Contains(t, out.Notes, "may be cut short")
}

func TestOpenAI_BadResponsesAreErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		reply   func(http.ResponseWriter, *http.Request)
		wantErr []string
	}{
		{
			name: "server error echoing the key",
			reply: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = io.WriteString(w, `{"error":{"message":"upstream failed for key `+
					strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")+`"}}`+strings.Repeat(" padding", 500))
			},
			wantErr: []string{"500 Internal Server Error", "upstream failed for key [redacted]", "…"},
		},
		{
			name: "malformed JSON",
			reply: func(w http.ResponseWriter, _ *http.Request) {
				_, _ = io.WriteString(w, `{"choices": [`)
			},
			wantErr: []string{"decode response", `body: {"choices": [`},
		},
		{
			name: "no choices",
			reply: func(w http.ResponseWriter, _ *http.Request) {
				_, _ = io.WriteString(w, `{"choices": []}`)
			},
			wantErr: []string{"has no choices"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newChatServer(t, tt.reply)
			out, err := newOpenAI(t, srv.URL, testKey).Generate(t.Context(), newInput(""))
			require.Error(t, err)
			for _, want := range tt.wantErr {
				require.ErrorContains(t, err, want)
			}
			require.ErrorContains(t, err, "obj-1")
			require.NotContains(t, err.Error(), testKey)
			require.Less(t, len(err.Error()), 1000, "the body quote is bounded")
			require.Zero(t, out)
		})
	}
}

func TestOpenAI_HangingServerEndsWithTheBudget(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := newChatServer(t, func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) }) // runs before the server's Close

	errBudget := errors.New("budget exhausted")
	ctx, cancel := context.WithTimeoutCause(t.Context(), 300*time.Millisecond, errBudget)
	defer cancel()
	start := time.Now()
	out, err := newOpenAI(t, srv.URL, testKey).Generate(ctx, newInput(""))
	// The server never answers: returning at all is ending with the budget.
	require.Less(t, time.Since(start), 15*time.Second)
	require.ErrorIs(t, err, errBudget)
	require.Zero(t, out)
}

func TestNewOpenAI_RefusesIncompleteOrInvalidOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		opts    patchgen.OpenAIOptions
		wantErr string
	}{
		{"no base URL", patchgen.OpenAIOptions{Model: "patcher"}, "no base URL"},
		{"blank base URL", patchgen.OpenAIOptions{BaseURL: " / ", Model: "patcher"}, "no base URL"},
		{"no model", patchgen.OpenAIOptions{BaseURL: "https://api.openai.com/v1"}, "no model"},
		{"unknown token parameter", patchgen.OpenAIOptions{BaseURL: "https://api.openai.com/v1", Model: "patcher",
			TokenParam: "max_output_tokens"}, `token parameter "max_output_tokens" is neither`},
		{"negative concurrency", patchgen.OpenAIOptions{BaseURL: "https://api.openai.com/v1", Model: "patcher",
			MaxConcurrency: -1}, "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g, err := patchgen.NewOpenAI(tt.opts)
			require.ErrorContains(t, err, tt.wantErr)
			require.Nil(t, g)
		})
	}
}

func TestOpenAI_TheRepositorysAgentsMDIsInThePrompt(t *testing.T) {
	t.Parallel()
	srv := newChatServer(t, completion("```diff\n"+helloDiff+"```\n", "stop"))
	g := newOpenAI(t, srv.URL+"/v1", testKey)
	in := newInput("/work/tree")
	in.HouseRules = "Run `make check` before you answer.\nNever touch vendor/."
	_, err := g.Generate(t.Context(), in)
	require.NoError(t, err)
	body := <-srv.bodies
	user := body["messages"].([]any)[1].(map[string]any)["content"].(string)
	require.Contains(t, user, "## The repository's instructions (its AGENTS.md)")
	require.Contains(t, user, "Never touch vendor/.")

	in.HouseRules = ""
	_, err = g.Generate(t.Context(), in)
	require.NoError(t, err)
	body = <-srv.bodies
	user = body["messages"].([]any)[1].(map[string]any)["content"].(string)
	require.NotContains(t, user, "AGENTS.md", "a repository without one says nothing of it")
}
