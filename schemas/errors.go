package schemas

import (
	"cmp"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/azolla/azolla/internal/textsafe"
)

// Violation is one reason a document does not match its schema.
type Violation struct {
	// Pointer is the JSON pointer (RFC 6901) of the failing value; "/" is the
	// document root. For a missing or unexpected property it is the pointer
	// of that property.
	Pointer string
	// Message says what is wrong with the value.
	Message string
}

// ValidationError reports every violation of one document, sorted by pointer.
type ValidationError struct {
	Kind       Kind
	Violations []Violation
}

// Error lists one clause per violation, each naming its JSON pointer, e.g.
// `invalid objective: /status: value must be one of ...; /title: required property is missing`.
func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString("invalid ")
	b.WriteString(string(e.Kind))
	for i, v := range e.Violations {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(v.Pointer)
		b.WriteString(": ")
		b.WriteString(v.Message)
	}
	return b.String()
}

const (
	// singleLinePattern is where a single_line value fails; its message
	// would quote a regular expression full of escapes, so it is replaced
	// by what is wrong with the value.
	singleLinePattern = "defs.schema.json#/$defs/single_line/pattern"

	missingPrefix    = "missing properties: "
	additionalPrefix = "additionalProperties "
	additionalSuffix = " not allowed"
)

// flatten turns jsonschema's error tree into its leaf causes, one violation
// per failing value, deduplicated and sorted by pointer. doc is the
// validated document, for messages that describe the failing value.
func flatten(root *jsonschema.ValidationError, doc any) []Violation {
	var out []Violation
	var walk func(*jsonschema.ValidationError)
	walk = func(ve *jsonschema.ValidationError) {
		if len(ve.Causes) > 0 {
			for _, c := range ve.Causes {
				walk(c)
			}
			return
		}
		out = append(out, leafViolations(ve, doc)...)
	}
	walk(root)
	slices.SortFunc(out, func(a, b Violation) int {
		return cmp.Or(cmp.Compare(a.Pointer, b.Pointer), cmp.Compare(a.Message, b.Message))
	})
	return slices.Compact(out)
}

// leafViolations translates one leaf error; required and additionalProperties
// failures become one violation per named property, at that property.
func leafViolations(ve *jsonschema.ValidationError, doc any) []Violation {
	parent := normalizePointer(ve.InstanceLocation)
	msg := ve.Message
	if strings.HasSuffix(ve.AbsoluteKeywordLocation, singleLinePattern) {
		return []Violation{{Pointer: parent, Message: singleLineMessage(doc, parent)}}
	}
	if rest, ok := strings.CutPrefix(msg, missingPrefix); ok {
		if names, ok := parseQuotedList(rest); ok {
			return propertyViolations(parent, names, "required property is missing")
		}
	}
	if strings.HasPrefix(msg, additionalPrefix) && strings.HasSuffix(msg, additionalSuffix) {
		list := strings.TrimSuffix(strings.TrimPrefix(msg, additionalPrefix), additionalSuffix)
		if names, ok := parseQuotedList(list); ok {
			return propertyViolations(parent, names, "property is not allowed")
		}
	}
	switch msg {
	case "not allowed": // a false schema, used to forbid a property in a conditional
		if parent == "/" {
			msg = "value is not allowed"
		} else {
			msg = "property is not allowed here"
		}
	case "not failed":
		msg = "value has a forbidden form"
	}
	return []Violation{{Pointer: parent, Message: msg}}
}

// singleLineMessage says which character keeps the string at pointer in doc
// from being a single line, e.g. "must be one line without control
// characters: control character U+001B at byte 1".
func singleLineMessage(doc any, pointer string) string {
	const must = "must be one line without control characters"
	s, ok := lookup(doc, pointer).(string)
	if !ok {
		return must
	}
	if err := textsafe.CheckLine(s); err != nil {
		return must + ": " + err.Error()
	}
	return must
}

// lookup returns the value at an RFC 6901 pointer in a decoded JSON
// document, nil when there is none.
func lookup(doc any, pointer string) any {
	if pointer == "/" || pointer == "" {
		return doc
	}
	v := doc
	for _, tok := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := v.(type) {
		case map[string]any:
			v = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			v = c[i]
		default:
			return nil
		}
	}
	return v
}

func propertyViolations(parent string, names []string, msg string) []Violation {
	out := make([]Violation, 0, len(names))
	for _, n := range names {
		out = append(out, Violation{Pointer: childPointer(parent, n), Message: msg})
	}
	return out
}

// normalizePointer turns jsonschema's instance location (whose tokens are
// URL-path-escaped) into a plain RFC 6901 pointer, "/" for the root.
func normalizePointer(loc string) string {
	if p, err := url.PathUnescape(loc); err == nil {
		loc = p
	}
	if loc == "" {
		return "/"
	}
	return loc
}

func childPointer(parent, name string) string {
	tok := strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
	if parent == "/" {
		return "/" + tok
	}
	return parent + "/" + tok
}

// parseQuotedList parses jsonschema's list of quoted names: 'a', 'b'. Each
// name is Go-quoted with double quotes left bare and single quotes escaped.
func parseQuotedList(s string) ([]string, bool) {
	var names []string
	for {
		if len(s) == 0 || s[0] != '\'' {
			return nil, false
		}
		var body strings.Builder
		i, closed := 1, false
		for i < len(s) {
			c := s[i]
			if c == '\\' && i+1 < len(s) {
				if s[i+1] == '\'' {
					body.WriteByte('\'')
				} else {
					body.WriteByte(c)
					body.WriteByte(s[i+1])
				}
				i += 2
				continue
			}
			i++
			if c == '\'' {
				closed = true
				break
			}
			if c == '"' {
				body.WriteString(`\"`)
			} else {
				body.WriteByte(c)
			}
		}
		if !closed {
			return nil, false
		}
		name, err := strconv.Unquote(`"` + body.String() + `"`)
		if err != nil {
			return nil, false
		}
		names = append(names, name)
		s = s[i:]
		if s == "" {
			return names, true
		}
		rest, ok := strings.CutPrefix(s, ", ")
		if !ok {
			return nil, false
		}
		s = rest
	}
}
