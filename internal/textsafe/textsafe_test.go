package textsafe

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestLineAndBlock_RenderControlsVisibly(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in, line, block string
	}{
		{"plain text is unchanged", "Fix the login page", "Fix the login page", "Fix the login page"},
		{"unicode is unchanged", "Grüße, 世界 — ok ✓", "Grüße, 世界 — ok ✓", "Grüße, 世界 — ok ✓"},
		{"backslashes are kept", `C:\repo\x1b and \n`, `C:\repo\x1b and \n`, `C:\repo\x1b and \n`},
		{"empty", "", "", ""},
		{"OSC retitle then CSI colour", "x\x1b]0;pwned\x07\x1b[31mred",
			`x\x1b]0;pwned\x07\x1b[31mred`, `x\x1b]0;pwned\x07\x1b[31mred`},
		{"CSI cursor movement", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`, `\x1b[2J\x1b[H`},
		{"NUL", "a\x00b", `a\x00b`, `a\x00b`},
		{"DEL", "a\x7fb", `a\x7fb`, `a\x7fb`},
		{"C1 CSI", "a\u009b31mb", `a\u009b31mb`, `a\u009b31mb`},
		{"right-to-left override", "abc\u202edcba", `abc\u202edcba`, `abc\u202edcba`},
		{"every bidi control", "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069",
			`\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069`,
			`\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069`},
		{"invalid UTF-8", "a\xffb\xc3", `a\xffb\xc3`, `a\xffb\xc3`},
		{"newline and tab", "a\tb\nc", `a\x09b\x0ac`, "a\tb\nc"},
		{"carriage return", "ok\rFAIL", `ok\x0dFAIL`, `ok\x0dFAIL`},
		{"a diff with an escape in an added line", "+\tfmt.Println(\"\x1b[31m\")\n-x\n",
			`+\x09fmt.Println("\x1b[31m")\x0a-x\x0a`, "+\tfmt.Println(\"\\x1b[31m\")\n-x\n"},
		{"U+FFFD itself is valid text", "a\uFFFDb", "a\uFFFDb", "a\uFFFDb"},
		{"zero width joiner is not a control", "a\u200db", "a\u200db", "a\u200db"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.line, Line(tc.in))
			require.Equal(t, tc.block, Block(tc.in))
			if tc.line == tc.in {
				require.NoError(t, CheckLine(tc.in))
			} else {
				require.Error(t, CheckLine(tc.in))
			}
		})
	}
}

func TestCheckLine_NamesTheCharacterAndItsOffset(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"x\x1b]0;pwned\x07": "control character U+001B at byte 1",
		"\x00":              "control character U+0000 at byte 0",
		"ab\ncd":            "control character U+000A at byte 2",
		"tab\there":         "control character U+0009 at byte 3",
		"é\u202e":           "control character U+202E at byte 2",
		"ok\x9b":            "invalid UTF-8 byte 0x9b at byte 2",
		"ok\u009b":          "control character U+009B at byte 2",
	}
	for in, want := range cases {
		require.EqualError(t, CheckLine(in), want, "%q", in)
	}
	require.NoError(t, CheckLine(`a plain title with a \ backslash`))
}

// FuzzRender: whatever the input, Line's output holds no character a
// terminal would obey, and Block's holds none but newlines and tabs; both
// are valid UTF-8, and text with nothing to escape comes back unchanged.
func FuzzRender(f *testing.F) {
	for _, s := range []string{"", "plain", "x\x1b]0;pwned\x07\x1b[31mred", "a\x00b", "\u202e", "\xff\xfe",
		"line\nnext\ttab\r", "\u0085\u009b", `back\slash`, "é\u2069"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		line, block := Line(s), Block(s)
		for name, out := range map[string]string{"Line": line, "Block": block} {
			if !utf8.ValidString(out) {
				t.Fatalf("%s(%q) = %q: not valid UTF-8", name, s, out)
			}
			for _, r := range out {
				if escaped(r) && !(name == "Block" && (r == '\n' || r == '\t')) {
					t.Fatalf("%s(%q) = %q holds %U", name, s, out, r)
				}
			}
		}
		if CheckLine(s) == nil && line != s {
			t.Fatalf("CheckLine(%q) passed but Line changed it to %q", s, line)
		}
		if CheckLine(line) != nil {
			t.Fatalf("Line(%q) = %q does not pass CheckLine: %v", s, line, CheckLine(line))
		}
		if strings.Count(block, "\n") != strings.Count(s, "\n") {
			t.Fatalf("Block(%q) = %q changed the number of lines", s, block)
		}
	})
}
