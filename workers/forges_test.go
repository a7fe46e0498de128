package workers_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store/storetest"
	"github.com/azolla/azolla/workers"
)

// The webhook takes its forges from patch.repositories[].forge: a delivery
// for a configured repository, signed with the secret its
// webhook_secret_env names, wakes the lifecycle of the objective it
// concerns; one unsigned is refused, and one for a repository not
// configured is not found.
func TestForgeWebhook_TakesTheForgesOfTheConfiguredRepositories(t *testing.T) {
	t.Parallel()
	ctx, now := context.Background(), time.Now().UTC()
	st := storetest.NewSQLite(t)
	wo := storetest.PassedOn(t, st, "obj-1", "/srv/app", now)
	_, _, err := st.RecordPullRequest(ctx, storetest.PullRequestParams(wo, 3, now))
	require.NoError(t, err)

	cfg := config.DefaultFor(func(string) string { return "" })
	cfg.Patch.Repositories = []config.RepositoryConfig{{Repository: "/srv/app", Forge: config.ForgeConfig{
		Kind: "github", URL: "https://forge.example", Repository: "team/app", TokenEnv: "APP_TOKEN",
		WebhookSecretEnv: "APP_HOOK"}}}
	const secret = "hook-secret-0123456789"
	getenv := func(k string) string { return map[string]string{"APP_HOOK": secret}[k] }
	var woken []string
	h := workers.ForgeWebhook(cfg, getenv, st, func(_ context.Context, o *domain.Objective) error {
		woken = append(woken, o.ObjectiveID)
		return nil
	}, nil, nil)

	deliver := func(repository string, signed bool) int {
		body := `{"repository":{"full_name":"` + repository + `"},"pull_request":{"head":{"ref":"azolla/obj-1"}}}`
		r := httptest.NewRequest(http.MethodPost, workers.PathForgeWebhook, bytes.NewBufferString(body))
		if signed {
			m := hmac.New(sha256.New, []byte(secret))
			m.Write([]byte(body))
			r.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(m.Sum(nil)))
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec.Code
	}
	require.Equal(t, http.StatusAccepted, deliver("team/app", true))
	require.Equal(t, http.StatusUnauthorized, deliver("team/app", false))
	require.Equal(t, http.StatusNotFound, deliver("team/other", true))
	require.Equal(t, []string{"obj-1"}, woken)
}
