package webhook_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store/sqlite"
	"github.com/azolla/azolla/internal/store/storetest"
	"github.com/azolla/azolla/workers/webhook"
)

const hookSecret = "hook-secret-0123456789"

// hookWorld is a store with one objective whose pull request is open on
// team/app, and the webhook handler of two forges: team/app's, with a
// webhook secret, and team/other's, without one.
type hookWorld struct {
	h     http.Handler
	mu    sync.Mutex
	woken []string
}

func newHookWorld(t *testing.T, kind string) *hookWorld {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "azolla.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	_, err = st.Migrate(ctx)
	require.NoError(t, err)
	now := time.Now().UTC()
	wo := storetest.PassedOn(t, st, "obj-1", "/srv/app", now)
	_, _, err = st.RecordPullRequest(ctx, storetest.PullRequestParams(wo, 3, now))
	require.NoError(t, err)
	storetest.PassedOn(t, st, "obj-2", "/srv/app", now) // no pull request

	forges := []config.ForgeConfig{
		{Kind: kind, URL: "https://forge.example", Repository: "team/app", TokenEnv: "APP_TOKEN", WebhookSecretEnv: "APP_HOOK"},
		{Kind: kind, URL: "https://forge.example", Repository: "team/other", TokenEnv: "APP_TOKEN"},
	}
	env := map[string]string{"APP_HOOK": hookSecret}
	w := &hookWorld{}
	w.h = webhook.Handler(forges, func(k string) string { return env[k] }, st,
		func(_ context.Context, o *domain.Objective) error {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.woken = append(w.woken, o.ObjectiveID)
			return nil
		}, nil, nil)
	return w
}

func (w *hookWorld) deliver(t *testing.T, body string, header map[string]string) int {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/forge/webhook", bytes.NewBufferString(body))
	for k, v := range header {
		r.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	w.h.ServeHTTP(rec, r)
	return rec.Code
}

func sign(secret, body string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(body))
	return hex.EncodeToString(m.Sum(nil))
}

// A signed delivery about an objective's open pull request wakes its
// lifecycle; a wrong or missing signature, another repository, a branch
// that is no objective's or one without an open pull request wake none.
func TestForgeWebhook_SignedDeliveriesWakeTheirLifecycle(t *testing.T) {
	t.Parallel()
	review := `{"action":"submitted","repository":{"full_name":"team/app"},"pull_request":{"head":{"ref":"azolla/obj-1"}}}`
	for _, tc := range []struct {
		kind   string
		header func(body, secret string) map[string]string
	}{
		{"github", func(b, s string) map[string]string {
			return map[string]string{"X-Hub-Signature-256": "sha256=" + sign(s, b)}
		}},
		{"gitea", func(b, s string) map[string]string { return map[string]string{"X-Gitea-Signature": sign(s, b)} }},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			t.Parallel()
			w := newHookWorld(t, tc.kind)
			require.Equal(t, http.StatusAccepted, w.deliver(t, review, tc.header(review, hookSecret)))
			require.Equal(t, http.StatusUnauthorized, w.deliver(t, review, tc.header(review, "another-secret")))
			require.Equal(t, http.StatusUnauthorized, w.deliver(t, review, nil))
			other := `{"repository":{"full_name":"team/other"},"pull_request":{"head":{"ref":"azolla/obj-1"}}}`
			require.Equal(t, http.StatusNotFound, w.deliver(t, other, tc.header(other, hookSecret)))
			for _, b := range []string{"feature/x", "azolla/obj-2", "azolla/nope"} {
				body := `{"repository":{"full_name":"team/app"},"pull_request":{"head":{"ref":"` + b + `"}}}`
				require.Equal(t, http.StatusNoContent, w.deliver(t, body, tc.header(body, hookSecret)), b)
			}
			status := `{"repository":{"full_name":"team/app"},"branches":[{"name":"azolla/obj-1"}],"state":"failure"}`
			require.Equal(t, http.StatusAccepted, w.deliver(t, status, tc.header(status, hookSecret)))
			require.Equal(t, http.StatusBadRequest, w.deliver(t, "not json", tc.header("not json", hookSecret)))
			require.Equal(t, []string{"obj-1", "obj-1"}, w.woken)
		})
	}
	t.Run("gitlab", func(t *testing.T) {
		t.Parallel()
		w := newHookWorld(t, "gitlab")
		note := `{"object_kind":"note","project":{"path_with_namespace":"team/app"},"merge_request":{"source_branch":"azolla/obj-1"}}`
		require.Equal(t, http.StatusAccepted, w.deliver(t, note, map[string]string{"X-Gitlab-Token": hookSecret}))
		require.Equal(t, http.StatusUnauthorized, w.deliver(t, note, map[string]string{"X-Gitlab-Token": "nope"}))
		pipeline := `{"object_kind":"pipeline","project":{"path_with_namespace":"team/app"},"object_attributes":{"ref":"azolla/obj-1","status":"failed"}}`
		require.Equal(t, http.StatusAccepted, w.deliver(t, pipeline, map[string]string{"X-Gitlab-Token": hookSecret}))
		require.Equal(t, []string{"obj-1", "obj-1"}, w.woken)
	})
}

// A signed delivery for a repository that takes issues wakes the intake,
// whatever it is about; an unsigned one, or one for a repository without
// forge.intake, does not.
func TestForgeWebhook_IssueDeliveriesWakeTheIntake(t *testing.T) {
	t.Parallel()
	st := storetest.NewSQLite(t)
	forges := []config.ForgeConfig{
		{Kind: "gitea", URL: "https://forge.example", Repository: "team/app", TokenEnv: "APP_TOKEN",
			WebhookSecretEnv: "APP_HOOK", Intake: config.IntakeConfig{Label: "azolla"}},
		{Kind: "gitea", URL: "https://forge.example", Repository: "team/quiet", TokenEnv: "APP_TOKEN",
			WebhookSecretEnv: "APP_HOOK"},
	}
	var wakes int
	h := webhook.Handler(forges, func(string) string { return hookSecret }, st,
		func(context.Context, *domain.Objective) error { return nil }, func() { wakes++ }, nil)
	deliver := func(body, sig string) int {
		r := httptest.NewRequest(http.MethodPost, "/forge/webhook", bytes.NewBufferString(body))
		r.Header.Set("X-Gitea-Signature", sig)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec.Code
	}
	opened := `{"action":"label_updated","repository":{"full_name":"team/app"},"issue":{"number":4}}`
	require.Equal(t, http.StatusAccepted, deliver(opened, sign(hookSecret, opened)))
	require.Equal(t, 1, wakes)
	require.Equal(t, http.StatusUnauthorized, deliver(opened, sign("forged", opened)))
	quiet := `{"action":"opened","repository":{"full_name":"team/quiet"},"issue":{"number":4}}`
	require.Equal(t, http.StatusNoContent, deliver(quiet, sign(hookSecret, quiet)))
	require.Equal(t, 1, wakes)
}
