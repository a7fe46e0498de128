package patchgen

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultOpenAIMaxAttempts bounds the requests of one Generate, the first
// included, when OpenAIOptions.MaxAttempts is zero.
const DefaultOpenAIMaxAttempts = 5

// Backoff without a Retry-After: firstBackoff doubled per attempt, capped at
// maxBackoff, and jittered down by up to half so that workers refused
// together do not all come back together.
const (
	firstBackoff = time.Second
	maxBackoff   = 32 * time.Second
)

// maxRetryAfter caps a Retry-After before it becomes a Duration: any value
// near it is past every budget anyway, and the cap keeps it from overflowing.
const maxRetryAfter = 365 * 24 * time.Hour

// ErrRetryPastBudget is returned, wrapped, when the endpoint refused a
// request for now (429 or 503) and the wait before the next attempt would
// end after ctx's deadline, the run's budget. Waiting would only spend the
// budget; the caller can branch on it and report the endpoint as saturated.
var ErrRetryPastBudget = errors.New("the wait before retrying is longer than the budget left")

// retryable reports whether status says "come back later": the two statuses
// OpenAI-compatible endpoints answer rate limits and overload with.
func retryable(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
}

// parseRetryAfter reads a Retry-After header value, delay-seconds or an
// HTTP-date (RFC 9110, section 10.2.3); ok is false when v is neither.
func parseRetryAfter(v string, now time.Time) (wait time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	secs, err := strconv.ParseUint(v, 10, 64)
	switch {
	case err == nil && secs <= uint64(maxRetryAfter/time.Second):
		return time.Duration(secs) * time.Second, true
	case err == nil || errors.Is(err, strconv.ErrRange): // all digits, too many
		return maxRetryAfter, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(t.Sub(now), 0), maxRetryAfter), true
	}
	return 0, false
}

// backoff is the wait after the attempt-th refusal (1-based) that named no
// Retry-After; jitter is in [0, 1).
func backoff(attempt int, jitter float64) time.Duration {
	d := maxBackoff
	if attempt <= 6 { // 1s << 5 = 32s: past that the cap holds
		d = min(firstBackoff<<(attempt-1), maxBackoff)
	}
	return d - time.Duration(jitter*float64(d/2))
}

// jitter is backoff's source of randomness.
func jitter() float64 { return rand.Float64() }

// sleepCtx waits d, or until ctx ends, and then returns ctx.Err().
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
