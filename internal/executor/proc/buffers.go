package proc

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// Output meant for bundles, notes and the database is made valid UTF-8
// without NUL bytes: invalid sequences and NULs become U+FFFD. JSON encoding
// would replace invalid UTF-8 anyway and PostgreSQL text accepts neither.
// Output that is already valid UTF-8 without NULs is kept byte for byte.
const replacement = "\uFFFD"

// HeadBuffer keeps the first Max bytes written to it and counts the rest, so
// that a command never blocks on a full pipe however much it writes. The zero
// Max keeps nothing. It is not safe for concurrent use; Run writes to it from
// one goroutine and has finished when it returns.
type HeadBuffer struct {
	Max   int
	buf   []byte
	total int64
}

// Write keeps what fits and never fails.
func (b *HeadBuffer) Write(p []byte) (int, error) {
	b.total += int64(len(p))
	if room := b.Max - len(b.buf); room > 0 {
		b.buf = append(b.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// Bytes returns the kept bytes as written; the slice is the buffer's own.
func (b *HeadBuffer) Bytes() []byte { return b.buf }

// Total is the number of bytes written, kept or not.
func (b *HeadBuffer) Total() int64 { return b.total }

// Truncated reports whether more was written than kept.
func (b *HeadBuffer) Truncated() bool { return b.total > int64(len(b.buf)) }

// Text returns the kept bytes sanitized (see Sanitize) and at most Max bytes
// long. truncated says that the text is not all that was written: either the
// cap was reached, or replacements lengthened the text past Max and it was
// cut. A rune split by the cap is dropped, not reported as invalid.
func (b *HeadBuffer) Text() (text string, truncated, replaced bool) {
	raw := b.buf
	truncated = b.Truncated()
	if truncated {
		raw = trimPartialRune(raw)
	}
	text, replaced = Sanitize(raw)
	if len(text) > b.Max {
		text, truncated = CutAtRune(text, b.Max), true
	}
	return text, truncated, replaced
}

// TailBuffer keeps the last Max bytes written to it and counts them all. The
// zero Max keeps nothing. It is not safe for concurrent use.
type TailBuffer struct {
	Max   int
	buf   []byte
	total int64
}

// Write keeps the end of what was written and never fails.
func (b *TailBuffer) Write(p []byte) (int, error) {
	b.total += int64(len(p))
	b.buf = append(b.buf, p...)
	if len(b.buf) > 2*b.Max { // compact now and then, not on every write
		b.buf = append(b.buf[:0], b.buf[len(b.buf)-b.Max:]...)
	}
	return len(p), nil
}

// Bytes returns the last at most Max bytes written, as written; the slice is
// the buffer's own.
func (b *TailBuffer) Bytes() []byte { return b.buf[max(0, len(b.buf)-b.Max):] }

// Total is the number of bytes written, kept or not.
func (b *TailBuffer) Total() int64 { return b.total }

// Truncated reports whether more was written than kept.
func (b *TailBuffer) Truncated() bool { return b.total > int64(len(b.Bytes())) }

// Text returns the kept bytes sanitized (see Sanitize). When the start of
// the output was dropped, a rune the cut fell inside is dropped too rather
// than replaced.
func (b *TailBuffer) Text() string {
	tail := b.Bytes()
	if b.Truncated() {
		for i := 0; i < utf8.UTFMax-1 && len(tail) > 0 && !utf8.RuneStart(tail[0]); i++ {
			tail = tail[1:]
		}
	}
	s, _ := Sanitize(tail)
	return s
}

// Sanitize returns b as valid UTF-8 without NUL bytes, replacing invalid
// sequences and NULs by U+FFFD, and reports whether it had to replace
// anything.
func Sanitize(b []byte) (string, bool) {
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

// CutAtRune returns the longest prefix of valid UTF-8 s of at most n bytes,
// so that bounding a text never leaves half a rune at its end.
func CutAtRune(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n = max(n, 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
