package gitea_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/forge/gitea"
)

// Answers a real Gitea does not give on demand (rate limits, a server
// error quoting the token) come from a stub; everything else is tested
// against the real one in gitea_test.go.
func TestErrors_AnswersMapToWhatCallersBranchOn(t *testing.T) {
	t.Parallel()
	const token = "f00dfeedf00dfeedf00dfeedf00dfeedf00dfeed"
	cases := []struct {
		name       string
		status     int
		retryAfter string
		body       string
		check      func(t *testing.T, err error)
	}{
		{name: "429 with Retry-After", status: 429, retryAfter: "7", body: `{"message":"slow down"}`,
			check: func(t *testing.T, err error) {
				var rl *forge.RateLimitError
				require.ErrorAs(t, err, &rl)
				require.Equal(t, 7*time.Second, rl.RetryAfter)
				require.Contains(t, rl.Message, "slow down")
			}},
		{name: "429 without Retry-After waits a minute", status: 429, body: `{"message":"slow down"}`,
			check: func(t *testing.T, err error) {
				var rl *forge.RateLimitError
				require.ErrorAs(t, err, &rl)
				require.Equal(t, time.Minute, rl.RetryAfter)
			}},
		{name: "403 with Retry-After is a rate limit", status: 403, retryAfter: "3", body: `{}`,
			check: func(t *testing.T, err error) {
				var rl *forge.RateLimitError
				require.ErrorAs(t, err, &rl)
				require.NotErrorIs(t, err, forge.ErrUnauthorized)
			}},
		{name: "401", status: 401, body: `{"message":"token is required"}`,
			check: func(t *testing.T, err error) { require.ErrorIs(t, err, forge.ErrUnauthorized) }},
		{name: "403", status: 403, body: `{"message":"token does not have at least one of required scope(s)"}`,
			check: func(t *testing.T, err error) { require.ErrorIs(t, err, forge.ErrUnauthorized) }},
		{name: "404", status: 404, body: `{"message":"The target couldn't be found."}`,
			check: func(t *testing.T, err error) { require.ErrorIs(t, err, forge.ErrNotFound) }},
		{name: "500 names the call and quotes the forge, cut short, token masked", status: 500,
			body: `{"message":"boom ` + token + " " + strings.Repeat("x", 1000) + `"}`,
			check: func(t *testing.T, err error) {
				require.NotErrorIs(t, err, forge.ErrNotFound)
				require.NotErrorIs(t, err, forge.ErrUnauthorized)
				msg := err.Error()
				require.Contains(t, msg, "GET /repos/o/r/pulls/5: 500 Internal Server Error: boom [token]")
				require.NotContains(t, msg, token)
				require.Less(t, len(msg), 400)
			}},
		{name: "502 from a proxy, not JSON", status: 502, body: "<html>Bad Gateway</html>",
			check: func(t *testing.T, err error) {
				require.ErrorContains(t, err, "502 Bad Gateway: <html>Bad Gateway</html>")
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				require.Equal(t, "token "+token, r.Header.Get("Authorization"))
				if c.retryAfter != "" {
					w.Header().Set("Retry-After", c.retryAfter)
				}
				w.WriteHeader(c.status)
				_, _ = w.Write([]byte(c.body))
			}))
			t.Cleanup(srv.Close)
			f, err := gitea.New(gitea.Options{BaseURL: srv.URL, Owner: "o", Repo: "r", Token: token})
			require.NoError(t, err)
			_, err = f.PullRequest(context.Background(), 5)
			require.Error(t, err)
			require.NotContains(t, err.Error(), token)
			c.check(t, err)
		})
	}
}

func TestNew_RefusesCredentialsInTheURLAndMissingParts(t *testing.T) {
	t.Parallel()
	for _, o := range []gitea.Options{
		{BaseURL: "https://azolla:secret@gitea.example.com", Owner: "o", Repo: "r", Token: "t"},
		{BaseURL: "gitea.example.com", Owner: "o", Repo: "r", Token: "t"},
		{BaseURL: "https://gitea.example.com", Repo: "r", Token: "t"},
		{BaseURL: "https://gitea.example.com", Owner: "o", Repo: "r"},
	} {
		_, err := gitea.New(o)
		require.Error(t, err, "%+v", o)
		require.NotContains(t, err.Error(), "secret")
	}
}
