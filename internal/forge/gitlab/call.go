package gitlab

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/azolla/azolla/internal/forge"
)

// defaultRateLimitWait is the wait of a 429 that names none: GitLab's
// throttles count requests per minute.
const defaultRateLimitWait = time.Minute

// call runs one request of the client library: it waits out the rate
// limits GitLab answers with while their waits add up to no more than
// MaxWait, and turns GitLab's refusals into forge's errors. what names the
// request in errors.
func call[T any](ctx context.Context, p *project, what string, do func(...gl.RequestOptionFunc) (T, *gl.Response, error)) (T, error) {
	v, _, err := callPage(ctx, p, what, do)
	return v, err
}

// callPage is call, with the response for its pagination headers.
func callPage[T any](ctx context.Context, p *project, what string, do func(...gl.RequestOptionFunc) (T, *gl.Response, error)) (T, *gl.Response, error) {
	var waited time.Duration
	for {
		v, resp, err := do(gl.WithContext(ctx))
		if err == nil {
			return v, resp, nil
		}
		var zero T
		wait, limited := p.rateLimit(err)
		if !limited {
			return zero, resp, refusal(what, err)
		}
		if waited+wait > p.maxWait {
			return zero, resp, fmt.Errorf("gitlab: %s: %w", what, &forge.RateLimitError{
				RetryAfter: wait,
				Message:    "GitLab answered 429 Too Many Requests",
			})
		}
		if err := p.sleep(ctx, wait); err != nil {
			return zero, resp, fmt.Errorf("gitlab: %s: waiting out a rate limit: %w", what, err)
		}
		waited += wait
	}
}

// list reads every page of a list, PageSize at a time, following
// X-Next-Page.
func list[T any](ctx context.Context, p *project, what string, fetch func(gl.ListOptions, ...gl.RequestOptionFunc) ([]T, *gl.Response, error)) ([]T, error) {
	var all []T
	page := int64(1)
	for {
		items, resp, err := callPage(ctx, p, what, func(o ...gl.RequestOptionFunc) ([]T, *gl.Response, error) {
			return fetch(gl.ListOptions{Page: page, PerPage: p.pageSize}, o...)
		})
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
		// A next page that does not move forward would loop for ever.
		if resp == nil || resp.NextPage <= page {
			return all, nil
		}
		page = resp.NextPage
	}
}

// rateLimit says whether err is GitLab's 429, and how long it asks to wait.
func (p *project) rateLimit(err error) (time.Duration, bool) {
	var e *gl.ErrorResponse
	if !errors.As(err, &e) || e.Response == nil || e.Response.StatusCode != http.StatusTooManyRequests {
		return 0, false
	}
	return retryAfter(e.Response.Header, p.now()), true
}

// retryAfter reads the wait a 429 asks for: Retry-After (seconds or an
// HTTP date), else RateLimit-Reset (Unix seconds), else
// defaultRateLimitWait.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if s, err := strconv.Atoi(v); err == nil && s >= 0 {
			return time.Duration(s) * time.Second
		}
		if t, err := http.ParseTime(v); err == nil {
			return max(t.Sub(now), 0)
		}
	}
	if v := strings.TrimSpace(h.Get("RateLimit-Reset")); v != "" {
		if s, err := strconv.ParseInt(v, 10, 64); err == nil && s > 0 {
			return max(time.Unix(s, 0).Sub(now), 0)
		}
	}
	return defaultRateLimitWait
}

// refusal turns an error of the client library into forge's: 404 is
// forge.ErrNotFound, 401 and a token without the scope are
// forge.ErrUnauthorized. The library's errors name the method and URL,
// never the token, which travels in a header.
func refusal(what string, err error) error {
	var e *gl.ErrorResponse
	switch {
	case errors.Is(err, gl.ErrNotFound):
		return fmt.Errorf("gitlab: %s: %w", what, forge.ErrNotFound)
	case errors.As(err, &e) && e.HasStatusCode(http.StatusUnauthorized):
		return fmt.Errorf("gitlab: %s: %w (401)", what, forge.ErrUnauthorized)
	case errors.As(err, &e) && e.HasStatusCode(http.StatusForbidden) && strings.Contains(e.Message, "insufficient_scope"):
		return fmt.Errorf("gitlab: %s: %w (403 insufficient_scope)", what, forge.ErrUnauthorized)
	}
	return fmt.Errorf("gitlab: %s: %w", what, err)
}
