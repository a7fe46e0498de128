// Package redact hides the values azolla knows to be secret (its DSNs'
// passwords, API keys, tokens, the secrets it passes to a run) in text
// before that text is written anywhere: an output bundle, a gate reason, a
// pause state, a job's result, a log line.
//
// It is the second line of defence. The first is that a run never gets
// azolla's secrets (package sandbox); redaction catches what slips through
// anyway, such as a secret a run was given on purpose and then printed.
// Text that must stay byte-exact, a patch, is not redacted: Find tells the
// caller to refuse it instead.
package redact

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
)

// MinLength is the shortest value redacted. A shorter one would match
// ordinary text ("test", "1234") everywhere; New reports such secrets in
// Redactor.TooShort so the caller can warn.
const MinLength = 6

// Secret is one secret value and the name it is known by: a configuration
// key (store.dsn) or an environment variable (OPENAI_API_KEY). The name is
// what replaces the value, so it must not be secret itself.
type Secret struct {
	Name  string
	Value string
}

// Mark is what a secret's value becomes: [redacted:NAME].
func Mark(name string) string { return "[redacted:" + name + "]" }

// Redactor replaces secrets' values with their marks. The zero value and
// nil redact nothing. It is immutable and safe for concurrent use.
type Redactor struct {
	forms    []form // longest first
	replacer *strings.Replacer
	tooShort []string
}

// form is one spelling of a secret's value: as it is, URL-escaped or
// JSON-escaped, as it may appear in a URL or a JSON log line.
type form struct {
	text, name string
}

// New returns a Redactor for secrets. Empty values are ignored; values
// shorter than MinLength are not redacted and listed in TooShort. When one
// value holds another (a DSN and its password), the longer is replaced
// whole.
func New(secrets ...Secret) *Redactor {
	r := &Redactor{}
	seen := map[string]bool{}
	for _, s := range secrets {
		if s.Value == "" {
			continue
		}
		if len(s.Value) < MinLength {
			if !slices.Contains(r.tooShort, s.Name) {
				r.tooShort = append(r.tooShort, s.Name)
			}
			continue
		}
		for _, text := range spellings(s.Value) {
			if len(text) >= MinLength && !seen[text] {
				seen[text] = true
				r.forms = append(r.forms, form{text: text, name: s.Name})
			}
		}
	}
	// strings.Replacer tries its pairs in order at each position: longest
	// first, so a DSN is replaced whole rather than around its password.
	slices.SortStableFunc(r.forms, func(a, b form) int { return cmp.Compare(len(b.text), len(a.text)) })
	if len(r.forms) > 0 {
		pairs := make([]string, 0, 2*len(r.forms))
		for _, f := range r.forms {
			pairs = append(pairs, f.text, Mark(f.name))
		}
		r.replacer = strings.NewReplacer(pairs...)
	}
	return r
}

// spellings are the forms a value may take in text azolla writes.
func spellings(v string) []string {
	out := []string{v, url.QueryEscape(v), url.PathEscape(v)}
	if b, err := json.Marshal(v); err == nil {
		out = append(out, string(b[1:len(b)-1]))
	}
	return out
}

// Join returns a Redactor for the secrets of every r; nils are skipped.
func Join(rs ...*Redactor) *Redactor {
	var all []Secret
	for _, r := range rs {
		all = append(all, r.Secrets()...)
	}
	return New(all...)
}

// Secrets returns the secrets r redacts (one per spelling), to build a
// larger Redactor from.
func (r *Redactor) Secrets() []Secret {
	if r == nil {
		return nil
	}
	out := make([]Secret, len(r.forms))
	for i, f := range r.forms {
		out[i] = Secret{Name: f.name, Value: f.text}
	}
	return out
}

// TooShort names the secrets too short to redact.
func (r *Redactor) TooShort() []string {
	if r == nil {
		return nil
	}
	return slices.Clone(r.tooShort)
}

// Empty reports whether r redacts nothing.
func (r *Redactor) Empty() bool { return r == nil || r.replacer == nil }

// String returns s with every secret's value replaced by its mark.
func (r *Redactor) String(s string) string {
	if r.Empty() {
		return s
	}
	return r.replacer.Replace(s)
}

// Find returns the name of a secret whose value s holds, and whether there
// is one: for text that must not be changed, only refused.
func (r *Redactor) Find(s string) (name string, found bool) {
	if r.Empty() {
		return "", false
	}
	for _, f := range r.forms {
		if strings.Contains(s, f.text) {
			return f.name, true
		}
	}
	return "", false
}

// Writer returns a writer that redacts each Write before passing it on to
// w. A secret split across two writes is not seen: it suits writers that
// get whole records per Write, as slog's handlers do.
func (r *Redactor) Writer(w io.Writer) io.Writer {
	if r.Empty() {
		return w
	}
	return writer{r: r, w: w}
}

type writer struct {
	r *Redactor
	w io.Writer
}

// Write reports len(p) when all of the redacted text was written, since
// callers count what they handed over, not what reached w.
func (w writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(w.w, w.r.String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// JSON returns the JSON document doc with secrets redacted in its strings
// (keys included), as valid JSON. A document without secrets is returned
// unchanged, byte for byte.
func (r *Redactor) JSON(doc []byte) ([]byte, error) {
	if _, found := r.Find(string(doc)); !found {
		return doc, nil
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("redact: decode JSON: %w", err)
	}
	return json.Marshal(r.value(v))
}

// value redacts the strings of a decoded JSON value.
func (r *Redactor) value(v any) any {
	switch x := v.(type) {
	case string:
		return r.String(x)
	case []any:
		for i := range x {
			x[i] = r.value(x[i])
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[r.String(k)] = r.value(e)
		}
		return out
	default:
		return v
	}
}
