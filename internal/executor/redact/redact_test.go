package redact_test

import (
	"bytes"
	"log/slog"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/redact"
)

func TestString_ReplacesEverySpellingOfASecret(t *testing.T) {
	t.Parallel()
	pw := `p@ss w"rd/+x`
	r := redact.New(redact.Secret{Name: "store.dsn", Value: pw})
	tests := []struct{ name, in string }{
		{"as it is", "connect with " + pw + " now"},
		{"query-escaped", "password=" + url.QueryEscape(pw)},
		{"path-escaped", "postgres://u:" + url.PathEscape(pw) + "@db/x"},
		{"JSON-escaped", `{"msg":"p@ss w\"rd/+x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := r.String(tt.in)
			require.Contains(t, out, "[redacted:store.dsn]")
			_, found := r.Find(out)
			require.False(t, found, "nothing of the secret is left in %q", out)
		})
	}
}

func TestString_LongerSecretIsReplacedWhole(t *testing.T) {
	t.Parallel()
	r := redact.New(redact.Secret{Name: "store.dsn.password", Value: "hunter22"},
		redact.Secret{Name: "store.dsn", Value: "postgres://app:hunter22@db:5432/azolla"})
	require.Equal(t, "dsn [redacted:store.dsn] and [redacted:store.dsn.password]",
		r.String("dsn postgres://app:hunter22@db:5432/azolla and hunter22"))
}

func TestNew_ShortAndEmptyValuesAreNotRedacted(t *testing.T) {
	t.Parallel()
	r := redact.New(redact.Secret{Name: "short", Value: "test"}, redact.Secret{Name: "empty"})
	require.True(t, r.Empty())
	require.Equal(t, []string{"short"}, r.TooShort())
	require.Equal(t, "test the tests", r.String("test the tests"))
}

func TestFind_NamesTheSecretWithoutChangingTheText(t *testing.T) {
	t.Parallel()
	r := redact.New(redact.Secret{Name: "OPENAI_API_KEY", Value: "sk-canary-123456"})
	name, found := r.Find("+key = \"sk-canary-123456\"\n")
	require.True(t, found)
	require.Equal(t, "OPENAI_API_KEY", name)
	_, found = r.Find("+key = \"sk-other\"\n")
	require.False(t, found)
}

func TestNilRedactsNothing(t *testing.T) {
	t.Parallel()
	var r *redact.Redactor
	require.Equal(t, "as is", r.String("as is"))
	_, found := r.Find("as is")
	require.False(t, found)
	var buf bytes.Buffer
	require.Same(t, &buf, r.Writer(&buf).(*bytes.Buffer))
}

func TestWriter_RedactsLogRecords(t *testing.T) {
	t.Parallel()
	r := redact.New(redact.Secret{Name: "temporal.api_key", Value: "tmprl-canary-key"})
	for _, format := range []string{"text", "json"} {
		var buf bytes.Buffer
		var h slog.Handler = slog.NewTextHandler(r.Writer(&buf), nil)
		if format == "json" {
			h = slog.NewJSONHandler(r.Writer(&buf), nil)
		}
		slog.New(h).Info("dial with tmprl-canary-key", "key", "tmprl-canary-key", "quoted", `say "tmprl-canary-key"`)
		require.NotContains(t, buf.String(), "tmprl-canary-key", format)
		require.Contains(t, buf.String(), "[redacted:temporal.api_key]", format)
	}
}

func TestJoin_KeepsEverySecret(t *testing.T) {
	t.Parallel()
	r := redact.Join(redact.New(redact.Secret{Name: "a", Value: "alpha-secret"}), nil,
		redact.New(redact.Secret{Name: "b", Value: "bravo-secret"}))
	require.Equal(t, "[redacted:a] [redacted:b]", r.String("alpha-secret bravo-secret"))
}

func TestSecretName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"OPENAI_API_KEY": true, "ANTHROPIC_API_KEY": true, "GITHUB_TOKEN": true, "GH_TOKEN": true,
		"PGPASSWORD": true, "AZOLLA_STORE_DSN": true, "AWS_SECRET_ACCESS_KEY": true, "api_key": true,
		"store.dsn": true, "temporal.api_key": true, "GOOGLE_APPLICATION_CREDENTIALS": true,
		"PATH": false, "HOME": false, "PWD": false, "LANG": false, "GOFLAGS": false, "MONKEY": false,
		"KEYBOARD_LAYOUT": false, "TERM": false,
	} {
		require.Equal(t, want, redact.SecretName(name), name)
	}
}

func TestFromEnviron(t *testing.T) {
	t.Parallel()
	got := redact.FromEnviron([]string{"PATH=/bin", "GITHUB_TOKEN=ghp_canary", "EMPTY_TOKEN=", "broken"})
	require.Equal(t, []redact.Secret{{Name: "GITHUB_TOKEN", Value: "ghp_canary"}}, got)
}

func TestJSON_RedactsStringsAndStaysValid(t *testing.T) {
	t.Parallel()
	r := redact.New(redact.Secret{Name: "tok", Value: "123456789"})
	out, err := r.JSON([]byte(`{"content":"token 123456789","n":123456789,"list":["123456789"]}`))
	require.NoError(t, err)
	require.JSONEq(t, `{"content":"token [redacted:tok]","n":123456789,"list":["[redacted:tok]"]}`, string(out),
		"strings are redacted; a number is left as it is rather than made invalid")
	clean := []byte(`{"b":1,  "a":"x"}`)
	out, err = r.JSON(clean)
	require.NoError(t, err)
	require.Equal(t, string(clean), string(out), "a document without secrets is untouched")
}
