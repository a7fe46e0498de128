// Package textsafe makes stored text safe to print on a terminal. Titles,
// criteria, notes and diffs come from people, captures, LLMs and remote
// workers; a control sequence among them (an OSC that retitles the window,
// a CSI that recolours or moves the cursor, a bidi override that reorders
// what is shown) must be seen, not obeyed.
//
// The escapes are one scheme throughout: \xNN for an invalid UTF-8 byte and
// for the ASCII controls (U+0000–U+001F, U+007F), \uNNNN for the C1 controls
// (U+0080–U+009F) and the bidi controls (U+061C, U+200E, U+200F,
// U+202A–U+202E, U+2066–U+2069). Everything else, backslashes included, is
// printed as it is, so paths and diffs stay readable.
package textsafe

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// escaped reports whether r is rendered as an escape by Line: C0 and C1
// controls, DEL, and the bidi controls. The JSON Schema definition
// single_line (schemas/defs.schema.json) refuses the same set.
func escaped(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// Line renders s on one line: every control (newlines and tabs included),
// bidi control and invalid UTF-8 byte is written as a visible escape, \xNN
// for bytes and ASCII controls, \uNNNN for the others. Backslashes are kept.
func Line(s string) string { return render(s, false) }

// Block is Line for multi-line text (notes, gate reasons, diffs): newlines
// and tabs are kept, a carriage return is escaped like any other control.
func Block(s string) string { return render(s, true) }

func render(s string, keepLines bool) string {
	first := firstEscape(s, keepLines)
	if first < 0 {
		return s // the common case: nothing to escape, nothing to copy
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:first])
	for i := first; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keepLines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case escaped(r) && r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case escaped(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// firstEscape is the byte offset of the first character render escapes, -1
// if there is none.
func firstEscape(s string, keepLines bool) int {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || (escaped(r) && !(keepLines && (r == '\n' || r == '\t'))) {
			return i
		}
		i += size
	}
	return -1
}

// CheckLine returns nil if Line would leave s unchanged, else an error
// naming the first offending character and its byte offset, e.g.
// "control character U+001B at byte 1".
func CheckLine(s string) error {
	i := firstEscape(s, false)
	if i < 0 {
		return nil
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && size == 1 {
		return fmt.Errorf("invalid UTF-8 byte 0x%02x at byte %d", s[i], i)
	}
	return fmt.Errorf("control character %U at byte %d", r, i)
}

// JSON makes encoded JSON safe to print: encoding/json escapes the C0
// controls but leaves DEL, the C1 controls and the bidi controls raw, and
// those are written as \uNNNN here. Inside a JSON string that is the same
// character to any reader; outside strings JSON holds none of them.
func JSON(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r >= 0x20 && escaped(r) {
			if out == nil {
				out = append(make([]byte, 0, len(b)+16), b[:i]...)
			}
			out = fmt.Appendf(out, `\u%04x`, r)
		} else if out != nil {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	if out == nil {
		return b
	}
	return out
}
