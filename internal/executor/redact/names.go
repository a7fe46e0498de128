package redact

import (
	"strings"
)

// secretWords are the words of a name that say its value is a secret, as
// in OPENAI_API_KEY, GITHUB_TOKEN, PGPASSWORD, store.dsn or api_key.
var secretWords = []string{"KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "DSN",
	"CREDENTIAL", "CREDENTIALS", "PRIVATE", "AUTH"}

// secretSuffixes catch names written as one word, PGPASSWORD or GHTOKEN.
var secretSuffixes = []string{"PASSWORD", "TOKEN", "SECRET", "APIKEY"}

// SecretName reports whether a variable or configuration key of this name
// holds a secret by its name: one of its words (split at '_', '.', '-')
// is KEY, TOKEN, SECRET, PASSWORD, DSN, CREDENTIALS, AUTH and the like, or
// it ends in PASSWORD, TOKEN, SECRET or APIKEY.
func SecretName(name string) bool {
	upper := strings.ToUpper(name)
	for _, w := range strings.FieldsFunc(upper, func(r rune) bool { return r == '_' || r == '.' || r == '-' }) {
		for _, s := range secretWords {
			if w == s {
				return true
			}
		}
	}
	for _, s := range secretSuffixes {
		if strings.HasSuffix(upper, s) {
			return true
		}
	}
	return false
}

// FromEnviron returns the variables of environ (KEY=VALUE entries) whose
// names SecretName judges secret, named by the variable.
func FromEnviron(environ []string) []Secret {
	var out []Secret
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && v != "" && SecretName(k) {
			out = append(out, Secret{Name: k, Value: v})
		}
	}
	return out
}
