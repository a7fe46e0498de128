package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	gh "github.com/google/go-github/v89/github"

	"github.com/azolla/azolla/internal/forge"
)

// maxRetries is how many times one request is sent again after a rate
// limit was slept through.
const maxRetries = 3

// secondaryDefaultWait is the wait when a limit names no time at all
// (GitHub's advice: at least a minute).
const secondaryDefaultWait = time.Minute

// do sends one request through call, sleeping through a rate limit no
// longer than maxWait and sending it again, and returns its error in the
// forge's terms.
func (f *Forge) do(ctx context.Context, call func(ctx context.Context) (*gh.Response, error)) error {
	attempt := ctx
	for retry := 0; ; retry++ {
		_, err := call(attempt)
		if err == nil {
			return nil
		}
		limit := rateLimit(err, time.Now())
		if limit == nil {
			return classify(err)
		}
		if retry == maxRetries || f.maxWait < 0 || limit.RetryAfter > f.maxWait {
			return limit
		}
		if err := f.sleep(ctx, limit.RetryAfter); err != nil {
			return fmt.Errorf("waiting out a %s: %w", limitKind(limit), err)
		}
		// go-github refuses, without a request, a call it believes still
		// limited by its own clock; the wait just slept is what GitHub asked
		// for, so the retry goes out.
		attempt = context.WithValue(ctx, gh.BypassRateLimitCheck, true)
	}
}

// collect reads every page of a list, PageSize items a page, following
// the Link header's next page.
func collect[T any](ctx context.Context, f *Forge, list func(ctx context.Context, page int) ([]T, *gh.Response, error)) ([]T, error) {
	var all []T
	for page := 1; ; {
		var items []T
		var next int
		err := f.do(ctx, func(ctx context.Context) (*gh.Response, error) {
			got, resp, err := list(ctx, page)
			items = got
			if resp != nil {
				next = resp.NextPage
			}
			return resp, err
		})
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
		if next <= page {
			return all, nil
		}
		page = next
	}
}

// rateLimit returns err as a *forge.RateLimitError when it is one of
// GitHub's rate limits, else nil.
func rateLimit(err error, now time.Time) *forge.RateLimitError {
	var primary *gh.RateLimitError
	if errors.As(err, &primary) {
		wait := secondaryDefaultWait
		if !primary.Rate.Reset.IsZero() {
			wait = max(primary.Rate.Reset.Sub(now), 0)
		}
		return &forge.RateLimitError{RetryAfter: wait, Message: primary.Message}
	}
	var secondary *gh.AbuseRateLimitError
	if errors.As(err, &secondary) {
		wait := secondaryDefaultWait
		if secondary.RetryAfter != nil {
			wait = max(*secondary.RetryAfter, 0)
		}
		return &forge.RateLimitError{RetryAfter: wait, Secondary: true, Message: secondary.Message}
	}
	// A limit go-github does not recognise (its test is the documentation
	// URL): a 429, or a 403 that says so or names a Retry-After.
	var er *gh.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil {
		return nil
	}
	status, h := er.Response.StatusCode, er.Response.Header
	limited := status == http.StatusTooManyRequests ||
		(status == http.StatusForbidden &&
			(h.Get("Retry-After") != "" || strings.Contains(strings.ToLower(er.Message), "rate limit")))
	if !limited {
		return nil
	}
	// go-github takes a 403 or 429 with x-ratelimit-remaining 0 for a
	// primary limit already, so this one is secondary: its wait is read as
	// go-github reads an AbuseRateLimitError's.
	wait := secondaryDefaultWait
	if s, err := strconv.Atoi(h.Get("Retry-After")); err == nil && s >= 0 {
		wait = time.Duration(s) * time.Second
	} else if reset, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil {
		wait = max(time.Unix(reset, 0).Sub(now), 0)
	}
	return &forge.RateLimitError{RetryAfter: wait, Secondary: true, Message: er.Message}
}

func limitKind(l *forge.RateLimitError) string {
	if l.Secondary {
		return "secondary rate limit"
	}
	return "rate limit"
}

// classify wraps the sentinel a caller branches on around a failed
// request's error.
func classify(err error) error {
	var tfa *gh.TwoFactorAuthError
	if errors.As(err, &tfa) {
		return fmt.Errorf("%w: %w", forge.ErrUnauthorized, err)
	}
	var er *gh.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil {
		return err
	}
	switch er.Response.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Errorf("%w: %w", forge.ErrUnauthorized, err)
	case http.StatusNotFound:
		return fmt.Errorf("%w: %w", forge.ErrNotFound, err)
	}
	return err
}

// sleepTimer waits d or until ctx ends.
func sleepTimer(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
