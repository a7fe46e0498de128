package gitlab

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/azolla/azolla/internal/forge"
)

// Defaults of Options.
const (
	DefaultBaseURL = "https://gitlab.com"
	// DefaultPageSize is GitLab's largest per_page.
	DefaultPageSize = 100
	DefaultMaxWait  = time.Minute
)

// Options say which project New reaches, and how.
type Options struct {
	// BaseURL is the GitLab instance's web address; the API is at
	// <BaseURL>/api/v4. Default DefaultBaseURL.
	BaseURL string
	// Project is the project's full path, "group/subgroup/name".
	Project string
	// Token is azolla's access token, sent as the PRIVATE-TOKEN header.
	Token string
	// HTTPClient carries the requests; default the client library's.
	HTTPClient *http.Client
	// PageSize is per_page on every list; default and at most
	// DefaultPageSize.
	PageSize int
	// Sleep waits out a rate limit; default a timer that gives up when
	// ctx ends.
	Sleep func(ctx context.Context, d time.Duration) error
	// MaxWait bounds the time one call spends waiting out rate limits;
	// past it the call returns *forge.RateLimitError. Default
	// DefaultMaxWait.
	MaxWait time.Duration
	// Now is the clock RateLimit-Reset is read against; default time.Now.
	Now func() time.Time
}

// project is one GitLab project reached with one token.
type project struct {
	api      *gl.Client
	path     string
	pageSize int64
	sleep    func(ctx context.Context, d time.Duration) error
	maxWait  time.Duration
	now      func() time.Time

	selfMu sync.Mutex
	self   string // azolla's username, once read
}

// New returns the forge.Forge of o.Project.
func New(o Options) (forge.Forge, error) {
	if strings.Trim(o.Project, "/") == "" {
		return nil, errors.New("gitlab: no project path")
	}
	if o.Token == "" {
		return nil, errors.New("gitlab: no token")
	}
	base := strings.TrimRight(o.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	opts := []gl.ClientOptionFunc{
		gl.WithBaseURL(base),
		gl.WithUserAgent("azolla"),
		// Rate limits are waited out in call, through Options.Sleep, so
		// that the wait is bounded and tests never really wait; any other
		// failure goes back to the caller's retry policy.
		gl.WithoutRetries(),
		// Left alone, the library paces requests by RateLimit-Limit with
		// real sleeps of its own.
		gl.WithCustomLimiter(unlimited{}),
	}
	if o.HTTPClient != nil {
		opts = append(opts, gl.WithHTTPClient(o.HTTPClient))
	}
	api, err := gl.NewClient(o.Token, opts...)
	if err != nil {
		return nil, fmt.Errorf("gitlab: client for %s: %w", base, err)
	}
	p := &project{
		api:      api,
		path:     strings.Trim(o.Project, "/"),
		pageSize: DefaultPageSize,
		sleep:    o.Sleep,
		maxWait:  o.MaxWait,
		now:      o.Now,
	}
	if o.PageSize > 0 && o.PageSize < DefaultPageSize {
		p.pageSize = int64(o.PageSize)
	}
	if p.sleep == nil {
		p.sleep = sleep
	}
	if p.maxWait <= 0 {
		p.maxWait = DefaultMaxWait
	}
	if p.now == nil {
		p.now = time.Now
	}
	return p, nil
}

// unlimited is the client library's rate limiter that never waits.
type unlimited struct{}

func (unlimited) Wait(context.Context) error { return nil }

// sleep waits for d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// username is azolla's own username on the instance (GET /user), read
// once: Reviews leaves azolla's notes out.
func (p *project) username(ctx context.Context) (string, error) {
	p.selfMu.Lock()
	defer p.selfMu.Unlock()
	if p.self != "" {
		return p.self, nil
	}
	u, err := call(ctx, p, "read the token's user", func(o ...gl.RequestOptionFunc) (*gl.User, *gl.Response, error) {
		return p.api.Users.CurrentUser(o...)
	})
	if err != nil {
		return "", err
	}
	p.self = u.Username
	return p.self, nil
}
