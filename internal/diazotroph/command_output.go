package diazotroph

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxContentBytes caps a Command's content. The output bundle schema sets no
// limit, but the bundle is one database row: stdout past the cap is read and
// discarded, and the notes give the size it had.
const MaxContentBytes = 4 << 20

// stderrTailBytes is how much of the end of stderr the notes quote.
const stderrTailBytes = 2 << 10

// maxTitleRunes bounds the objective title quoted in a bundle title.
const maxTitleRunes = 200

// Content and notes are made valid UTF-8 without NUL bytes: invalid sequences
// and NULs become U+FFFD. JSON encoding would replace invalid UTF-8 anyway
// (schema validation sees the JSON form), and PostgreSQL text accepts neither.
// Output that is valid UTF-8 without NULs is kept byte for byte.
const replacement = "\uFFFD"

// headBuffer keeps the first MaxContentBytes bytes written to it and counts
// the rest, so the command never blocks on a full stdout pipe.
type headBuffer struct {
	buf   []byte
	total int64
}

func (b *headBuffer) Write(p []byte) (int, error) {
	b.total += int64(len(p))
	if room := MaxContentBytes - len(b.buf); room > 0 {
		b.buf = append(b.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// content returns the kept output as bundle content, and a note (starting
// with "; ", or "") saying what was truncated or replaced.
func (b *headBuffer) content() (string, string) {
	raw := b.buf
	truncated := b.total > int64(len(raw))
	if truncated {
		raw = trimPartialRune(raw)
	}
	s, replaced := sanitize(raw)
	if len(s) > MaxContentBytes { // replacements can lengthen it
		s, truncated = cutAtRune(s, MaxContentBytes), true
	}
	var note string
	if truncated {
		note += fmt.Sprintf("; stdout truncated to %d of %d bytes (limit %d)", len(s), b.total, MaxContentBytes)
	}
	if replaced {
		note += "; invalid UTF-8 and NUL bytes in stdout replaced by U+FFFD"
	}
	return s, note
}

// tailBuffer keeps the last stderrTailBytes bytes written to it.
type tailBuffer struct {
	buf   []byte
	total int64
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.total += int64(len(p))
	b.buf = append(b.buf, p...)
	if len(b.buf) > 2*stderrTailBytes { // compact now and then, not per write
		b.buf = append(b.buf[:0], b.buf[len(b.buf)-stderrTailBytes:]...)
	}
	return len(p), nil
}

// note quotes the tail of stderr for the notes, or returns "" if there was
// none.
func (b *tailBuffer) note() string {
	if b.total == 0 {
		return ""
	}
	tail := b.buf[max(0, len(b.buf)-stderrTailBytes):]
	header := "stderr:"
	if b.total > int64(len(tail)) {
		header = fmt.Sprintf("stderr (last %d of %d bytes):", len(tail), b.total)
		for i := 0; i < utf8.UTFMax-1 && len(tail) > 0 && !utf8.RuneStart(tail[0]); i++ {
			tail = tail[1:] // the cut fell inside a rune
		}
	}
	s, _ := sanitize(tail)
	return "\n" + header + "\n" + strings.TrimRight(s, "\n")
}

// title is "COMMAND_DIAZOTROPH: <objective title>" on one line, bounded.
func title(req Request) string {
	t := strings.Join(strings.Fields(strings.ToValidUTF8(req.Objective.Title, replacement)), " ")
	if t == "" {
		t = "workorder " + req.WorkOrder.WorkOrderID
	}
	if utf8.RuneCountInString(t) > maxTitleRunes {
		t = string([]rune(t)[:maxTitleRunes-1]) + "…"
	}
	return CommandType + ": " + t
}

// sanitize returns b as valid UTF-8 without NULs, and whether it had to
// change anything.
func sanitize(b []byte) (string, bool) {
	if utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 {
		return string(b), false
	}
	s := strings.ToValidUTF8(string(b), replacement)
	return strings.ReplaceAll(s, "\x00", replacement), true
}

// trimPartialRune drops an incomplete rune that a cut left at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			return b
		}
	}
	return b
}

// cutAtRune returns the longest prefix of valid UTF-8 s of at most n bytes.
func cutAtRune(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
