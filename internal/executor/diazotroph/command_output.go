package diazotroph

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/azolla/azolla/internal/executor/proc"
	"github.com/azolla/azolla/internal/executor/sandbox"
)

// MaxContentBytes caps a Command's content. The output bundle schema sets no
// limit, but the bundle is one database row: stdout past the cap is read and
// discarded, and the notes give the size it had.
const MaxContentBytes = 4 << 20

// stderrTailBytes is how much of the end of stderr the notes quote.
const stderrTailBytes = 2 << 10

// maxTitleRunes bounds the objective title quoted in a bundle title.
const maxTitleRunes = 200

// Content and notes are made valid UTF-8 without NUL bytes (proc.Sanitize):
// JSON encoding would replace invalid UTF-8 anyway (schema validation sees
// the JSON form), and PostgreSQL text accepts neither.

// stdoutContent returns the kept stdout as bundle content, and a note
// (starting with "; ", or "") saying what was truncated or replaced.
func stdoutContent(b *proc.HeadBuffer) (string, string) {
	s, truncated, replaced := b.Text()
	var note string
	if truncated {
		note += fmt.Sprintf("; stdout truncated to %d of %d bytes (limit %d)", len(s), b.Total(), MaxContentBytes)
	}
	if replaced {
		note += "; invalid UTF-8 and NUL bytes in stdout replaced by U+FFFD"
	}
	return s, note
}

// stderrNote quotes the tail of stderr for the notes, or returns "" if there
// was none.
func stderrNote(b *proc.TailBuffer) string {
	if b.Total() == 0 {
		return ""
	}
	header := "stderr:"
	if b.Truncated() {
		header = fmt.Sprintf("stderr (last %d of %d bytes):", len(b.Bytes()), b.Total())
	}
	return "\n" + header + "\n" + strings.TrimRight(b.Text(), "\n")
}

// limitNote says what a run's limits and sandbox had to do with how it
// ended, or returns "".
func limitNote(o sandbox.Outcome) string {
	if s := o.Explain(); s != "" {
		return "; " + s
	}
	return ""
}

// title is "COMMAND_DIAZOTROPH: <objective title>" on one line, bounded.
func title(req Request) string {
	t := strings.Join(strings.Fields(strings.ToValidUTF8(req.Objective.Title, "\uFFFD")), " ")
	if t == "" {
		t = "workorder " + req.WorkOrder.WorkOrderID
	}
	if utf8.RuneCountInString(t) > maxTitleRunes {
		t = string([]rune(t)[:maxTitleRunes-1]) + "…"
	}
	return CommandType + ": " + t
}
