package cli

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/remote/controlplane"
	"github.com/azolla/azolla/internal/store/sqlite"
)

func TestWorkerTokenCreate_PrintsTheTokenAloneAndStoresOnlyItsHash(t *testing.T) {
	t.Parallel()
	env := map[string]string{"AZOLLA_DATA_DIR": t.TempDir()}
	res := azolla(t, env, "worker-token", "create", "builder-1")
	require.Equal(t, 0, res.code, res.stderr)
	require.Regexp(t, `^azw_[A-Za-z0-9_-]{43}\n$`, res.stdout, "the token alone on stdout, for scripts")
	token := strings.TrimSuffix(res.stdout, "\n")
	require.Regexp(t, `^Store this token in a file with mode 0600 and pass it with azolla remote-worker --token-file FILE; it is not shown again\.\n$`, res.stderr)

	s, err := sqlite.Open(t.Context(), filepath.Join(env["AZOLLA_DATA_DIR"], "azolla.db"))
	require.NoError(t, err)
	defer s.Close()
	got, err := s.GetWorkerTokenByHash(t.Context(), controlplane.HashWorkerToken(token))
	require.NoError(t, err, "the token authenticates")
	require.Equal(t, "builder-1", got.WorkerID)
	var row string
	require.NoError(t, s.DB().QueryRowContext(t.Context(),
		`SELECT token_hash || ' ' || worker_id || ' ' || created_at || ' ' || COALESCE(revoked_at, '') FROM worker_tokens`).Scan(&row))
	require.NotContains(t, row, strings.TrimPrefix(token, controlplane.WorkerTokenPrefix), "the token itself is stored nowhere")

	again := azolla(t, env, "worker-token", "create", "builder-2")
	require.Equal(t, 0, again.code, again.stderr)
	require.NotEqual(t, res.stdout, again.stdout, "every token is new")
}

func TestWorkerTokenCreate_ASecondLiveTokenIsRefusedUntilRevoked(t *testing.T) {
	t.Parallel()
	env := map[string]string{"AZOLLA_DATA_DIR": t.TempDir()}
	require.Equal(t, 0, azolla(t, env, "worker-token", "create", "builder-1").code)

	res := azolla(t, env, "worker-token", "create", "builder-1")
	require.Equal(t, exitRefused, res.code)
	require.Empty(t, res.stdout, "no token is printed")
	require.Contains(t, res.stderr, "worker builder-1 already has a live token; revoke it first: azolla worker-token revoke builder-1")

	res = azolla(t, env, "worker-token", "revoke", "builder-1")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "revoked the token of worker builder-1\n", res.stdout)
	res = azolla(t, env, "worker-token", "create", "builder-1")
	require.Equal(t, 0, res.code, res.stderr)
}

func TestWorkerTokenRevoke_UnknownOrRevokedNameIsNotFound(t *testing.T) {
	t.Parallel()
	env := map[string]string{"AZOLLA_DATA_DIR": t.TempDir()}
	res := azolla(t, env, "worker-token", "revoke", "nobody")
	require.Equal(t, exitNotFound, res.code)
	require.Equal(t, "azolla: worker nobody has no live token: not found\n", res.stderr)

	require.Equal(t, 0, azolla(t, env, "worker-token", "create", "builder-1").code)
	require.Equal(t, 0, azolla(t, env, "worker-token", "revoke", "builder-1").code)
	res = azolla(t, env, "worker-token", "revoke", "builder-1")
	require.Equal(t, exitNotFound, res.code, "revoked twice")
}

func TestWorkerToken_RefusesANameThatIsNotIdentityLike(t *testing.T) {
	t.Parallel()
	env := map[string]string{"AZOLLA_DATA_DIR": t.TempDir()}
	for _, name := range []string{"", "two words", "a/b", "w\x1b[31m", strings.Repeat("x", 65), "ünïcode"} {
		for _, sub := range []string{"create", "revoke"} {
			res := azolla(t, env, "worker-token", sub, name)
			require.Equal(t, exitUsage, res.code, "%s %q", sub, name)
			require.Contains(t, res.stderr, "NAME must be 1 to 64 of A-Z a-z 0-9 . _ -", "%s %q", sub, name)
			require.Empty(t, res.stdout)
			requireNoRawControls(t, res.stderr)
		}
	}
	res := azolla(t, env, "worker-token", "create", strings.Repeat("x", 64))
	require.Equal(t, 0, res.code, "64 characters is the limit: %s", res.stderr)
	res = azolla(t, env, "worker-token", "create", "A-z_0.9")
	require.Equal(t, 0, res.code, res.stderr)
}

func TestWorkerTokenList_ShowsNamesAndDatesNeverHashes(t *testing.T) {
	t.Parallel()
	env := map[string]string{"AZOLLA_DATA_DIR": t.TempDir()}
	res := azolla(t, env, "worker-token", "list")
	require.Equal(t, 0, res.code, res.stderr)
	require.Equal(t, "NAME                      CREATED               REVOKED\n", res.stdout)

	tokens := map[string]string{}
	for _, name := range []string{"builder-1", "builder-2"} {
		res := azolla(t, env, "worker-token", "create", name)
		require.Equal(t, 0, res.code, res.stderr)
		tokens[name] = strings.TrimSpace(res.stdout)
	}
	require.Equal(t, 0, azolla(t, env, "worker-token", "revoke", "builder-1").code)

	res = azolla(t, env, "worker-token", "list")
	require.Equal(t, 0, res.code, res.stderr)
	date := `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`
	require.Regexp(t, regexp.MustCompile(`(?m)^builder-1 +`+date+`  `+date+`$`), res.stdout)
	require.Regexp(t, regexp.MustCompile(`(?m)^builder-2 +`+date+`  -$`), res.stdout)
	for _, token := range tokens {
		require.NotContains(t, res.stdout, controlplane.HashWorkerToken(token))
	}

	res = azolla(t, env, "worker-token", "list", "--output", "json")
	require.Equal(t, 0, res.code, res.stderr)
	var views []workerTokenView
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &views))
	require.Len(t, views, 2)
	require.NotContains(t, res.stdout, "hash")
	for name, token := range tokens {
		require.NotContains(t, res.stdout, token)
		require.NotContains(t, res.stdout, controlplane.HashWorkerToken(token), name)
	}
}
