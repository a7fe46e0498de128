package config

import (
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"

	"github.com/azolla/azolla/internal/executor/redact"
)

// Secrets returns every secret value of the configuration, named by its
// key, for redaction: the value of each key whose name says it is secret
// (store.dsn, temporal.api_key, a forge token; see redact.SecretName), the
// password of every URL or DSN wherever it is (a push remote's token, a
// Redis URL's password), and env entries whose names say they are secret.
// It walks the whole configuration, so a secret key added later is covered
// without a list to keep.
func (c Config) Secrets() []redact.Secret {
	var out []redact.Secret
	walkStrings("", reflect.ValueOf(c), func(key, name, value string) {
		if value == "" {
			return
		}
		// A *_file or *_env key names where a secret is, which is no
		// secret.
		if redact.SecretName(name) && !strings.HasSuffix(name, "_file") && !strings.HasSuffix(name, "_env") {
			out = append(out, redact.Secret{Name: key, Value: value})
		}
		if pw := password(value); pw != "" {
			out = append(out, redact.Secret{Name: key + ".password", Value: pw})
		}
	})
	return out
}

// walkStrings calls fn for every string in v with its dotted key and the
// name that key ends in; map keys and slice indexes are part of the key.
func walkStrings(key string, v reflect.Value, fn func(key, name, value string)) {
	join := func(name string) string {
		if key == "" {
			return name
		}
		return key + "." + name
	}
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			tag := t.Field(i).Tag.Get("mapstructure")
			name, opts, _ := strings.Cut(tag, ",")
			switch {
			case opts == "squash":
				walkStrings(key, v.Field(i), fn)
			case name != "" && name != "-":
				walkStrings(join(name), v.Field(i), fn)
			}
		}
	case reflect.Map:
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		for _, k := range keys {
			walkStrings(join(k.String()), v.MapIndex(k), fn)
		}
	case reflect.Slice:
		for i := range v.Len() {
			walkStrings(fmt.Sprintf("%s[%d]", key, i), v.Index(i), fn)
		}
	case reflect.String:
		name := key
		if i := strings.LastIndexAny(key, ".]"); i >= 0 {
			name = key[i+1:]
		}
		fn(key, name, v.String())
	}
}

// password returns the password in a URL's user info or query, or in a
// libpq key=value DSN; "" when there is none.
func password(s string) string {
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil {
			return ""
		}
		if pw, ok := u.User.Password(); ok {
			return pw
		}
		for _, p := range urlSecretParams {
			if v := u.Query().Get(p); v != "" {
				return v
			}
		}
		return ""
	}
	if m := kvSecret.FindStringSubmatch(s); m != nil {
		v := m[2]
		if strings.HasPrefix(v, "'") {
			v = strings.ReplaceAll(strings.Trim(v, "'"), `\'`, `'`)
		}
		return v
	}
	return ""
}
