package github_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/forge/github"
)

func TestRateLimits(t *testing.T) {
	t.Parallel()
	tooManyRequests := fault{status: http.StatusTooManyRequests, retryAfter: 3 * time.Second,
		message: "Too Many Requests"}
	noRetryAfter := secondaryLimit(0) // the fake's x-ratelimit-reset is an hour ahead
	for _, tc := range []struct {
		name    string
		faults  []fault
		maxWait time.Duration
		// slept are the waits asked for, each within the second GitHub's reset times are rounded to.
		slept []time.Duration
		// limited is the error's RetryAfter, nil when the call succeeds.
		limited   *time.Duration
		secondary bool
	}{
		{name: "secondary within MaxWait is slept through", faults: []fault{secondaryLimit(7 * time.Second)},
			slept: []time.Duration{7 * time.Second}},
		{name: "primary within MaxWait is slept through", faults: []fault{primaryLimit(20 * time.Second)},
			slept: []time.Duration{20 * time.Second}},
		{name: "secondary without Retry-After waits for x-ratelimit-reset", faults: []fault{noRetryAfter},
			limited: ptr(time.Hour), secondary: true},
		{name: "a 429 go-github does not recognise is a secondary limit", faults: []fault{tooManyRequests},
			slept: []time.Duration{3 * time.Second}},
		{name: "primary past MaxWait is returned", faults: []fault{primaryLimit(time.Hour)},
			limited: ptr(time.Hour)},
		{name: "secondary past MaxWait is returned", faults: []fault{secondaryLimit(5 * time.Minute)},
			limited: ptr(5 * time.Minute), secondary: true},
		{name: "a fourth limit in a row is returned",
			faults: []fault{secondaryLimit(2 * time.Second), secondaryLimit(2 * time.Second),
				secondaryLimit(2 * time.Second), secondaryLimit(2 * time.Second)},
			slept:   []time.Duration{2 * time.Second, 2 * time.Second, 2 * time.Second},
			limited: ptr(2 * time.Second), secondary: true},
		{name: "a negative MaxWait never waits", faults: []fault{secondaryLimit(time.Second)},
			maxWait: -1, limited: ptr(time.Second), secondary: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, "", func(o *github.Options) { o.MaxWait = tc.maxWait })
			b.fake.push("azolla/limited")
			n := b.fake.humanOpens("azolla/limited", "Limited")
			b.fake.failNext(tc.faults...)

			pr, err := b.forge.PullRequest(context.Background(), n)

			slept := b.sleeper.Slept()
			require.Len(t, slept, len(tc.slept))
			for i := range slept {
				require.InDelta(t, tc.slept[i], slept[i], float64(2*time.Second), "wait %d", i)
			}
			require.Len(t, b.fake.requests("GET "+pullsPath+"/"+strconv.Itoa(n)), len(slept)+1,
				"each wait is followed by one request")
			if tc.limited == nil {
				require.NoError(t, err)
				require.Equal(t, n, pr.Number)
				return
			}
			var limit *forge.RateLimitError
			require.ErrorAs(t, err, &limit)
			require.InDelta(t, *tc.limited, limit.RetryAfter, float64(2*time.Second))
			require.Equal(t, tc.secondary, limit.Secondary)
			require.NotEmpty(t, limit.Message)
		})
	}
}

func ptr[T any](v T) *T { return &v }
