// Package textsafe makes stored text safe to print on a terminal. Titles,
// criteria, notes and diffs come from people, captures, LLMs and remote
// workers; a control sequence among them (an OSC that retitles the window,
// a CSI that recolours or moves the cursor, a bidi override that reorders
// what is shown) must be seen, not obeyed.
package textsafe

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// unsafe reports whether r is rendered as an escape: C0 and C1 controls,
// DEL, and the bidi controls.
func unsafe(r rune) bool {
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

// Block is Line for multi-line text: newlines and tabs are kept.
func Block(s string) string { return render(s, true) }

func render(s string, keepLines bool) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keepLines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case unsafe(r) && r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafe(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// CheckLine returns nil if Line would leave s unchanged, else an error
// naming the first offending character and its byte offset.
func CheckLine(s string) error {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return fmt.Errorf("invalid UTF-8 byte 0x%02x at byte %d", s[i], i)
		}
		if unsafe(r) {
			return fmt.Errorf("control character %U at byte %d", r, i)
		}
		i += size
	}
	return nil
}
