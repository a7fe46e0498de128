package config

import (
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/azolla/azolla/internal/executor/redact"
)

// maskURL hides the password of a URL with user info; anything else is
// returned as it is.
func maskURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return s
	}
	if _, ok := u.User.Password(); !ok {
		return s
	}
	return u.Redacted()
}

// SecretMask is what replaces a secret in Masked output: the mask
// url.URL.Redacted writes, so that every masked secret reads alike.
const SecretMask = "xxxxx"

// Masked returns a copy safe to print or log: the DSN's password, the
// Temporal and OpenAI API keys and passwords in repository URLs are
// replaced by "xxxxx".
func (c Config) Masked() Config {
	c.Store.DSN = maskDSN(c.Store.DSN)
	if c.Temporal.APIKey != "" {
		c.Temporal.APIKey = SecretMask
	}
	c.ControlPlane.RedisURL = maskURL(c.ControlPlane.RedisURL)
	if len(c.Substrates) > 0 {
		subs := make(map[string]SubstrateConfig, len(c.Substrates))
		for n, s := range c.Substrates {
			s.DSN = maskDSN(s.DSN)
			subs[n] = s
		}
		c.Substrates = subs
	}
	if c.Patch.OpenAI.APIKey != "" {
		c.Patch.OpenAI.APIKey = SecretMask
	}
	// A push remote URL may carry credentials (https://user:token@host/…).
	if len(c.Patch.Repositories) > 0 {
		repos := make([]RepositoryConfig, len(c.Patch.Repositories))
		for i, r := range c.Patch.Repositories {
			r.Repository, r.PushRemote = maskURL(r.Repository), maskURL(r.PushRemote)
			r.GateEnv = maskEnv(r.GateEnv, r.GateSecretEnv)
			repos[i] = r
		}
		c.Patch.Repositories = repos
	}
	c.Diazotroph.Command.Env = maskEnv(c.Diazotroph.Command.Env, c.Diazotroph.Command.SecretEnv)
	c.Patch.Command.Env = maskEnv(c.Patch.Command.Env, c.Patch.Command.SecretEnv)
	return c
}

// maskEnv masks the values of env whose names say they are secret or are
// listed in secretNames.
func maskEnv(env map[string]string, secretNames []string) map[string]string {
	if len(env) == 0 {
		return env
	}
	out := make(map[string]string, len(env))
	for k, v := range env {
		if redact.SecretName(k) || slices.Contains(secretNames, k) {
			v = SecretMask
		}
		out[k] = maskURL(v)
	}
	return out
}

// kvSecret matches password and sslpassword values in libpq key=value form,
// single-quoted (backslash escapes allowed) or bare.
var kvSecret = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s']+)`)

// urlSecretParams are the query parameters libpq accepts secrets in.
var urlSecretParams = []string{"password", "sslpassword"}

func maskDSN(dsn string) string {
	if dsn == "" {
		return ""
	}
	if !strings.Contains(dsn, "://") {
		return kvSecret.ReplaceAllString(dsn, "${1}"+SecretMask)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		// Where the password is cannot be told reliably; hide it all.
		return SecretMask
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), SecretMask)
	}
	u.RawQuery = maskQuery(u.RawQuery)
	return u.String()
}

// maskQuery masks secret parameters in place, keeping the order and encoding
// of the others (url.Values.Encode would sort them).
func maskQuery(raw string) string {
	if raw == "" {
		return raw
	}
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		k, _, _ := strings.Cut(p, "=")
		if key, err := url.QueryUnescape(k); err == nil && isSecretParam(key) {
			parts[i] = k + "=" + SecretMask
		}
	}
	return strings.Join(parts, "&")
}

func isSecretParam(key string) bool {
	for _, s := range urlSecretParams {
		if strings.EqualFold(key, s) {
			return true
		}
	}
	return false
}
