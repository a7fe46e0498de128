package patchgen_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/patchgen"
)

// sleeper stands in for the generator's wait before a retry: it records
// each wait and returns at once, so tests see the delays without spending
// them.
type sleeper struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeper) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, d)
	return ctx.Err()
}

func (s *sleeper) Slept() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.waits)
}

// refuseFirst answers the first n requests with status and header, then
// with completion's patch.
func refuseFirst(n int, status int, header map[string]string) func(http.ResponseWriter, *http.Request) {
	var seen atomic.Int32
	ok := completion("```diff\n"+helloDiff+"```", "stop")
	return func(w http.ResponseWriter, r *http.Request) {
		if int(seen.Add(1)) > n {
			ok(w, r)
			return
		}
		for k, v := range header {
			w.Header().Set(k, v)
		}
		http.Error(w, `{"error":{"message":"slow down"}}`, status)
	}
}

func newLimitedOpenAI(t *testing.T, o patchgen.OpenAIOptions) *patchgen.OpenAI {
	t.Helper()
	o.Model = "patcher"
	g, err := patchgen.NewOpenAI(o)
	require.NoError(t, err)
	return g
}

func TestOpenAI_RetryAfterIsWaitedAndThePatchTaken(t *testing.T) {
	t.Parallel()
	srv := newChatServer(t, refuseFirst(1, http.StatusTooManyRequests, map[string]string{"Retry-After": "1"}))
	var s sleeper
	g := newLimitedOpenAI(t, patchgen.OpenAIOptions{BaseURL: srv.URL, Sleep: s.Sleep})

	out, err := g.Generate(t.Context(), newInput(""))
	require.NoError(t, err)
	require.Equal(t, helloDiff, out.Patch)
	require.Equal(t, []time.Duration{time.Second}, s.Slept())
	require.Len(t, srv.requests, 2)
	require.Equal(t, &patchgen.Usage{Model: "patcher-2025-01-01", PromptTokens: 10, CompletionTokens: 20}, out.Usage)
	require.Contains(t, out.Notes, "\nusage: model patcher-2025-01-01, 10 prompt / 20 completion tokens")
	require.Contains(t, out.Notes, "\nretried: 2 requests, 1s waited for the endpoint")
}

func TestOpenAI_UnavailableWithoutRetryAfterBacksOff(t *testing.T) {
	t.Parallel()
	srv := newChatServer(t, refuseFirst(2, http.StatusServiceUnavailable, nil))
	var s sleeper
	g := newLimitedOpenAI(t, patchgen.OpenAIOptions{BaseURL: srv.URL, Sleep: s.Sleep})

	out, err := g.Generate(t.Context(), newInput(""))
	require.NoError(t, err)
	require.Equal(t, helloDiff, out.Patch)
	waits := s.Slept()
	require.Len(t, waits, 2)
	// 1s then 2s, each jittered down by at most half.
	require.InDelta(t, 750*time.Millisecond, waits[0], float64(250*time.Millisecond))
	require.InDelta(t, 1500*time.Millisecond, waits[1], float64(500*time.Millisecond))
}

func TestOpenAI_WaitPastTheBudgetFailsAtOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		budget  time.Duration
		header  map[string]string
		wantErr string
	}{
		{"retry-after seconds", 10 * time.Second, map[string]string{"Retry-After": "120"},
			"the endpoint asked to wait 2m0s (Retry-After: 120), longer than the"},
		{"retry-after date", 10 * time.Second,
			map[string]string{"Retry-After": time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)},
			"the endpoint asked to wait 59m"},
		{"backoff", 200 * time.Millisecond, nil, "would start past the"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newChatServer(t, refuseFirst(1, http.StatusTooManyRequests, tt.header))
			var s sleeper
			g := newLimitedOpenAI(t, patchgen.OpenAIOptions{BaseURL: srv.URL, Sleep: s.Sleep})
			ctx, cancel := context.WithTimeout(t.Context(), tt.budget)
			defer cancel()

			out, err := g.Generate(ctx, newInput(""))
			require.ErrorIs(t, err, patchgen.ErrRetryPastBudget)
			require.ErrorContains(t, err, tt.wantErr)
			require.ErrorContains(t, err, "left of the run's budget")
			require.ErrorContains(t, err, "429 Too Many Requests")
			require.Zero(t, out)
			require.Empty(t, s.Slept())
			require.Len(t, srv.requests, 1)
		})
	}
}

func TestOpenAI_AttemptsAreBounded(t *testing.T) {
	t.Parallel()
	srv := newChatServer(t, refuseFirst(100, http.StatusTooManyRequests, map[string]string{"Retry-After": "0"}))
	var s sleeper
	g := newLimitedOpenAI(t, patchgen.OpenAIOptions{BaseURL: srv.URL, Sleep: s.Sleep, MaxAttempts: 3})

	out, err := g.Generate(t.Context(), newInput(""))
	require.ErrorContains(t, err, "429 Too Many Requests on each of 3 attempts")
	require.ErrorContains(t, err, "slow down")
	require.Zero(t, out)
	require.Len(t, srv.requests, 3)
	require.Len(t, s.Slept(), 2)
}

func TestOpenAI_OtherStatusesAreNotRetried(t *testing.T) {
	t.Parallel()
	srv := newChatServer(t, refuseFirst(1, http.StatusBadRequest, map[string]string{"Retry-After": "0"}))
	var s sleeper
	g := newLimitedOpenAI(t, patchgen.OpenAIOptions{BaseURL: srv.URL, Sleep: s.Sleep})
	_, err := g.Generate(t.Context(), newInput(""))
	require.ErrorContains(t, err, "400 Bad Request")
	require.Len(t, srv.requests, 1)
	require.Empty(t, s.Slept())
}

// gatedServer holds every request until Release, and counts how many it
// holds at once.
type gatedServer struct {
	*httptest.Server
	entered  chan struct{}
	release  chan struct{}
	released sync.Once
	inFlight atomic.Int32
	most     atomic.Int32
	served   atomic.Int32
}

func newGatedServer(t *testing.T) *gatedServer {
	t.Helper()
	s := &gatedServer{entered: make(chan struct{}, 100), release: make(chan struct{})}
	ok := completion("```diff\n"+helloDiff+"```", "stop")
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read the body whole: only then does net/http watch the
		// connection and end r.Context() when the client goes.
		_, _ = io.Copy(io.Discard, r.Body)
		n := s.inFlight.Add(1)
		for m := s.most.Load(); n > m && !s.most.CompareAndSwap(m, n); m = s.most.Load() {
		}
		s.entered <- struct{}{}
		select {
		case <-s.release:
		case <-r.Context().Done():
		}
		s.inFlight.Add(-1)
		s.served.Add(1)
		ok(w, r)
	}))
	t.Cleanup(s.Close)
	t.Cleanup(s.Release) // runs first: Close waits for the handlers
	return s
}

// Release lets every request held, and every later one, through.
func (s *gatedServer) Release() { s.released.Do(func() { close(s.release) }) }

func TestOpenAI_ConcurrentCallsPerEndpointAreCapped(t *testing.T) {
	t.Parallel()
	srv := newGatedServer(t)
	errs := make(chan error, 5)
	for range 5 {
		// A generator each, as concurrent activities build them: the cap
		// is the process's, per endpoint.
		g := newLimitedOpenAI(t, patchgen.OpenAIOptions{BaseURL: srv.URL, MaxConcurrency: 2})
		go func() {
			out, err := g.Generate(t.Context(), newInput(""))
			if err == nil && out.Patch != helloDiff {
				err = errors.New("no patch")
			}
			errs <- err
		}()
	}
	for range 2 {
		select {
		case <-srv.entered:
		case err := <-errs: // a run that ends before reaching the endpoint must fail the test, not hang it
			t.Fatalf("a run ended before two reached the endpoint: %v", err)
		}
	}
	select {
	case <-srv.entered:
		t.Fatal("a third request reached the endpoint while two were in flight")
	case err := <-errs:
		t.Fatalf("a run ended while two were in flight: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	srv.Release()
	for range 5 {
		require.NoError(t, <-errs)
	}
	require.EqualValues(t, 5, srv.served.Load())
	require.EqualValues(t, 2, srv.most.Load())
}

func TestOpenAI_WaitingForASlotEndsWithTheBudget(t *testing.T) {
	t.Parallel()
	srv := newGatedServer(t)
	first := newLimitedOpenAI(t, patchgen.OpenAIOptions{BaseURL: srv.URL, MaxConcurrency: 1})
	go func() { _, _ = first.Generate(t.Context(), newInput("")) }()
	<-srv.entered

	errBudget := errors.New("budget exhausted")
	ctx, cancel := context.WithTimeoutCause(t.Context(), 100*time.Millisecond, errBudget)
	defer cancel()
	second := newLimitedOpenAI(t, patchgen.OpenAIOptions{BaseURL: srv.URL, MaxConcurrency: 1})
	out, err := second.Generate(ctx, newInput(""))
	require.ErrorIs(t, err, errBudget)
	require.ErrorContains(t, err, "wait for a free slot")
	require.Zero(t, out)
	require.EqualValues(t, 1, srv.inFlight.Load(), "the second never reached the endpoint")
}

func TestOpenAI_TokenLimitGoesInTheConfiguredField(t *testing.T) {
	t.Parallel()
	tests := []struct {
		param, sent, notSent string
	}{
		{"", "max_completion_tokens", "max_tokens"},
		{patchgen.TokenParamMaxCompletionTokens, "max_completion_tokens", "max_tokens"},
		{patchgen.TokenParamMaxTokens, "max_tokens", "max_completion_tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.sent+"/"+tt.param, func(t *testing.T) {
			t.Parallel()
			srv := newChatServer(t, completion("```diff\n"+helloDiff+"```", "stop"))
			g := newLimitedOpenAI(t, patchgen.OpenAIOptions{BaseURL: srv.URL, TokenParam: tt.param, MaxTokens: 1000})
			_, err := g.Generate(t.Context(), newInput(""))
			require.NoError(t, err)
			body := <-srv.bodies
			require.EqualValues(t, 1000, body[tt.sent])
			require.NotContains(t, body, tt.notSent)
		})
	}
}

func TestOpenAI_CachedPromptTokensAreRecorded(t *testing.T) {
	t.Parallel()
	srv := newChatServer(t, func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{
			"model":   "patcher-2025-01-01",
			"choices": []any{map[string]any{"message": map[string]any{"content": "```diff\n" + helloDiff + "```"}}},
			"usage": map[string]any{"prompt_tokens": 1200, "completion_tokens": 300,
				"prompt_tokens_details": map[string]any{"cached_tokens": 1024}},
		})
	})
	out, err := newLimitedOpenAI(t, patchgen.OpenAIOptions{BaseURL: srv.URL}).Generate(t.Context(), newInput(""))
	require.NoError(t, err)
	require.Equal(t, &patchgen.Usage{Model: "patcher-2025-01-01", PromptTokens: 1200, CompletionTokens: 300,
		CachedPromptTokens: 1024}, out.Usage)
	require.Contains(t, out.Notes, "\nusage: model patcher-2025-01-01, 1200 prompt / 300 completion tokens (1024 prompt tokens cached)")
}

func TestOpenAI_NoUsageReportedIsNoUsage(t *testing.T) {
	t.Parallel()
	srv := newChatServer(t, func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{
			"choices": []any{map[string]any{"message": map[string]any{"content": "```diff\n" + helloDiff + "```"}}},
		})
	})
	out, err := newLimitedOpenAI(t, patchgen.OpenAIOptions{BaseURL: srv.URL}).Generate(t.Context(), newInput(""))
	require.NoError(t, err)
	require.Nil(t, out.Usage)
	require.NotContains(t, out.Notes, "usage:")
}
