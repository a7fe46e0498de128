package gitops

import (
	"regexp"
	"strings"
	"sync"
)

// The functions in this file read path names out of patch header lines the
// way git apply does (apply.c: find_name, find_name_traditional,
// git_header_name, unquote_c_style), for -p1. Where git's reading depends on
// heuristics this file does not copy, they fail and CheckPatch refuses the
// patch: a name read differently from git would defeat every check on it.

// unquoteC decodes the C-style quoted string at the start of s (s[0] is '"')
// and returns it with what follows the closing quote.
func unquoteC(s string) (name, rest string, ok bool) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			return b.String(), s[i+1:], true
		case '\n':
			return "", "", false
		case '\\':
			i++
			if i >= len(s) {
				return "", "", false
			}
			switch e := s[i]; e {
			case 'a':
				b.WriteByte('\a')
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'v':
				b.WriteByte('\v')
			case '\\', '"':
				b.WriteByte(e)
			case '0', '1', '2', '3':
				if i+2 >= len(s) || !isOctal(s[i+1]) || !isOctal(s[i+2]) {
					return "", "", false
				}
				b.WriteByte((e-'0')<<6 | (s[i+1]-'0')<<3 | (s[i+2] - '0'))
				i += 2
			default:
				return "", "", false
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", false
}

func isOctal(c byte) bool { return '0' <= c && c <= '7' }

// stripComponent removes everything up to and including the first '/', as
// -p1 does; ok is false when there is no '/'.
func stripComponent(name string) (string, bool) {
	_, after, ok := strings.Cut(name, "/")
	return after, ok
}

// squashSlashes collapses runs of '/' the way git does for names it reads
// from ---, +++, rename and copy lines.
func squashSlashes(name string) string {
	for strings.Contains(name, "//") {
		name = strings.ReplaceAll(name, "//", "/")
	}
	return name
}

// isDevNull is git's is_dev_null: "/dev/null" followed by whitespace or the
// end of the line.
func isDevNull(s string) bool {
	rest, ok := strings.CutPrefix(s, "/dev/null")
	return ok && (rest == "" || isSpace(rest[0]))
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// nameError says why a name could not be read; parsePatch turns it into a
// refusal of path, the name as far as it was read.
type nameError struct {
	path, reason string
}

func (e *nameError) Error() string { return e.reason }

// prefixedName reads the -p1 name of a ---/+++ line's value s (newline
// removed). tabEnds is true in a git header, where a tab ends the name;
// a traditional header needs the strict timestamp handling instead.
func prefixedName(s string, tabEnds bool) (string, error) {
	var raw string
	switch {
	case strings.HasPrefix(s, `"`):
		name, _, ok := unquoteC(s)
		if !ok {
			return "", &nameError{s, "malformed quoted path"}
		}
		raw = name
	case tabEnds:
		raw, _, _ = strings.Cut(s, "\t")
	default:
		name, err := traditionalName(s)
		if err != nil {
			return "", err
		}
		raw = name
	}
	if strings.HasPrefix(raw, "/") {
		return "", &nameError{raw, "absolute path"}
	}
	name, ok := stripComponent(raw)
	if !ok {
		return "", &nameError{raw, "no a/ or b/ prefix to strip"}
	}
	return squashSlashes(name), nil
}

// timestamp is the part of diff -u's "name<TAB>timestamp" that this package
// knows git strips; git knows more forms, which are refused here. Compiled
// on first use: its counted repetitions are a program of about 17 KB that
// every process linking gitops would otherwise build at start.
var timestamp = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?( [+-][0-9]{4})?$`)
})

// traditionalName reads the name of a non-git ---/+++ value. git cuts a
// trailing timestamp by looking backwards from the end of the line, and
// whether it finds one depends on the name; so a name must be followed by
// nothing, a tab, or a tab and a plain timestamp, and may contain no
// whitespace of its own unless a tab ends it.
func traditionalName(s string) (string, error) {
	name, suffix, tab := strings.Cut(s, "\t")
	switch {
	case tab && suffix != "" && !timestamp().MatchString(suffix):
		return "", &nameError{name, "unrecognized text after the path and a tab"}
	case !tab && strings.ContainsFunc(name, func(r rune) bool { return r < 0x80 && isSpace(byte(r)) }):
		return "", &nameError{name, "whitespace in a path outside git's diff format"}
	}
	return name, nil
}

// verbatimName reads the name of a rename or copy line: not prefixed, to the
// end of the line unless quoted.
func verbatimName(s string) (string, error) {
	if strings.HasPrefix(s, `"`) {
		name, _, ok := unquoteC(s)
		if !ok {
			return "", &nameError{s, "malformed quoted path"}
		}
		s = name
	}
	return squashSlashes(s), nil
}

// skipTreePrefix is git's skip_tree_prefix for -p1: what follows the first
// '/', refusing a name that starts with '/'.
func skipTreePrefix(s string) (string, bool) {
	i := strings.IndexByte(s, '/')
	if i <= 0 {
		return "", false
	}
	return s[i+1:], true
}

// gitHeaderName is the name git takes from "diff --git <rest>" when the
// header has no other names (a mode change, a binary or empty file): both
// sides must name the same path. ok is false when git could not tell either.
func gitHeaderName(rest string) (string, bool) {
	if strings.HasPrefix(rest, `"`) {
		first, after, ok := unquoteC(rest)
		if !ok {
			return "", false
		}
		if first, ok = skipTreePrefix(first); !ok {
			return "", false
		}
		after = strings.TrimLeftFunc(after, func(r rune) bool { return r < 0x80 && isSpace(byte(r)) })
		if strings.HasPrefix(after, `"`) {
			second, _, ok := unquoteC(after)
			if !ok {
				return "", false
			}
			second, ok = skipTreePrefix(second)
			return first, ok && second == first
		}
		second, ok := skipTreePrefix(after)
		return first, ok && second == first
	}

	name, ok := skipTreePrefix(rest)
	if !ok {
		return "", false
	}
	// An unquoted first name: a '"' must open the second one.
	if q := strings.IndexByte(name, '"'); q >= 0 {
		second, _, ok := unquoteC(name[q:])
		if !ok {
			return "", false
		}
		if second, ok = skipTreePrefix(second); !ok {
			return "", false
		}
		n := len(second)
		if n < q && name[:n] == second && isSpace(name[n]) {
			return second, true
		}
		return "", false
	}
	// Both unquoted: the first split at a space or tab where both halves
	// name the same path.
	for i := 0; i < len(name); i++ {
		if name[i] != ' ' && name[i] != '\t' {
			continue
		}
		if second, ok := skipTreePrefix(name[i+1:]); ok && second == name[:i] {
			return name[:i], true
		}
	}
	return "", false
}
