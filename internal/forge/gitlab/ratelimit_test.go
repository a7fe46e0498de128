package gitlab_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/forge/gitlab"
	"github.com/azolla/azolla/internal/forge/gitlab/gitlabfake"
)

// opened is a bundle with one open merge request, and its number.
func opened(t *testing.T, edit ...func(*gitlab.Options)) (*testBundle, int) {
	t.Helper()
	b := setup(t, gitlabfake.Options{}, edit...)
	b.fake.Push("azolla/limited")
	pr, _, err := b.forge.OpenOrAdopt(context.Background(), forge.NewPullRequest{Head: "azolla/limited", Base: "main",
		Title: "t", Body: "b"})
	require.NoError(t, err)
	return b, pr.Number
}

func TestRateLimit_SleepsForRetryAfterThenSucceeds(t *testing.T) {
	t.Parallel()
	b, n := opened(t)
	b.fake.Throttle(gitlabfake.Limit{Requests: 1, RetryAfter: 7 * time.Second})
	pr, err := b.forge.PullRequest(context.Background(), n)
	require.NoError(t, err)
	require.Equal(t, n, pr.Number)
	require.Equal(t, []time.Duration{7 * time.Second}, b.sleep.Slept())
}

func TestRateLimit_SleepsUntilRateLimitResetWithoutRetryAfter(t *testing.T) {
	t.Parallel()
	b, n := opened(t)
	b.fake.Throttle(gitlabfake.Limit{Requests: 1, RetryAfter: 20 * time.Second, ResetOnly: true})
	_, err := b.forge.PullRequest(context.Background(), n)
	require.NoError(t, err)
	require.Equal(t, []time.Duration{20 * time.Second}, b.sleep.Slept(), "RateLimit-Reset read against Now")
}

func TestRateLimit_PastMaxWaitIsARateLimitError(t *testing.T) {
	t.Parallel()
	b, n := opened(t) // MaxWait: the default minute
	b.fake.Throttle(gitlabfake.Limit{Requests: 1, RetryAfter: 90 * time.Second})
	_, err := b.forge.PullRequest(context.Background(), n)
	var rl *forge.RateLimitError
	require.ErrorAs(t, err, &rl)
	require.Equal(t, 90*time.Second, rl.RetryAfter)
	require.False(t, rl.Secondary)
	require.Empty(t, b.sleep.Slept(), "a wait past MaxWait is not begun")
}

func TestRateLimit_WaitsOfOneCallAddUpToMaxWait(t *testing.T) {
	t.Parallel()
	b, n := opened(t, func(o *gitlab.Options) { o.MaxWait = time.Minute })
	b.fake.Throttle(gitlabfake.Limit{Requests: 3, RetryAfter: 25 * time.Second})
	_, err := b.forge.PullRequest(context.Background(), n)
	var rl *forge.RateLimitError
	require.ErrorAs(t, err, &rl)
	require.Equal(t, []time.Duration{25 * time.Second, 25 * time.Second}, b.sleep.Slept(),
		"a third wait would make 75s, past the minute")

	// The next call has a budget of its own.
	b.fake.Throttle(gitlabfake.Limit{Requests: 2, RetryAfter: 25 * time.Second})
	_, err = b.forge.PullRequest(context.Background(), n)
	require.NoError(t, err)
}

func TestRateLimit_TheDefaultSleepEndsWithTheContext(t *testing.T) {
	t.Parallel()
	b, n := opened(t, func(o *gitlab.Options) { o.Sleep = nil })
	b.fake.Throttle(gitlabfake.Limit{Requests: 1, RetryAfter: 30 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := b.forge.PullRequest(ctx, n)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(start), 10*time.Second)
}

// Every response of GitLab.com carries RateLimit-Limit; left to itself the
// client library would pace requests by it with real sleeps (here 60 a
// minute: about one every 1.5s).
func TestRateLimit_TheClientLibraryDoesNotPace(t *testing.T) {
	t.Parallel()
	b := setup(t, gitlabfake.Options{RateLimit: 60})
	start := time.Now()
	for range 12 {
		_, err := b.forge.Checks(context.Background(), b.fake.Push("azolla/paced"))
		require.NoError(t, err)
	}
	require.Less(t, time.Since(start), 5*time.Second)
}
