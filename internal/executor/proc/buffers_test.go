package proc_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/proc"
)

// write feeds chunks to w one Write at a time, as a pipe would.
func write(t *testing.T, w interface{ Write([]byte) (int, error) }, chunks ...string) {
	t.Helper()
	for _, c := range chunks {
		n, err := w.Write([]byte(c))
		require.NoError(t, err)
		require.Equal(t, len(c), n, "a capped buffer must accept everything")
	}
}

func TestHeadBuffer_KeepsTheStart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		max           int
		chunks        []string
		wantText      string
		wantTotal     int64
		wantTruncated bool
		wantReplaced  bool
	}{
		{"under the cap", 10, []string{"abc", "def"}, "abcdef", 6, false, false},
		{"exactly the cap", 6, []string{"abc", "def"}, "abcdef", 6, false, false},
		{"over the cap across writes", 4, []string{"abc", "def", "ghi"}, "abcd", 9, true, false},
		{"zero cap keeps nothing", 0, []string{"abc"}, "", 3, true, false},
		{"cap inside a rune drops the rune", 4, []string{"ab✓cd"}, "ab", 7, true, false},
		{"invalid bytes and NUL replaced", 10, []string{"a\xffb\x00c"}, "a\uFFFDb\uFFFDc", 5, false, true},
		{"replacements past the cap are cut", 4, []string{"\xffa\xffb"}, "\uFFFDa", 4, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := &proc.HeadBuffer{Max: tt.max}
			write(t, b, tt.chunks...)
			text, truncated, replaced := b.Text()
			require.Equal(t, tt.wantText, text)
			require.Equal(t, tt.wantTruncated, truncated)
			require.Equal(t, tt.wantReplaced, replaced)
			require.Equal(t, tt.wantTotal, b.Total())
			require.LessOrEqual(t, len(text), tt.max)
			require.LessOrEqual(t, len(b.Bytes()), tt.max)
		})
	}
}

func TestTailBuffer_KeepsTheEnd(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		max           int
		chunks        []string
		wantText      string
		wantTruncated bool
	}{
		{"under the cap", 10, []string{"abc", "def"}, "abcdef", false},
		{"over the cap across writes", 4, []string{"abc", "def", "ghi"}, "fghi", true},
		{"many writes compact", 3, strings.Split(strings.Repeat("x", 50)+"end", ""), "end", true},
		{"cut inside a rune drops its rest", 4, []string{"ab✓cd"}, "cd", true},
		{"invalid bytes replaced", 4, []string{"aa\x00\xff"}, "aa\uFFFD\uFFFD", false},
		{"zero cap keeps nothing", 0, []string{"abc"}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := &proc.TailBuffer{Max: tt.max}
			write(t, b, tt.chunks...)
			require.Equal(t, tt.wantText, b.Text())
			require.Equal(t, tt.wantTruncated, b.Truncated())
			require.Equal(t, int64(len(strings.Join(tt.chunks, ""))), b.Total())
			require.LessOrEqual(t, len(b.Bytes()), tt.max)
		})
	}
}

func TestSanitize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
		wantReplaced   bool
	}{
		{"valid text kept byte for byte", "héllo ✓\n", "héllo ✓\n", false},
		{"empty", "", "", false},
		{"NUL", "a\x00b", "a\uFFFDb", true},
		{"invalid byte", "a\xffb", "a\uFFFDb", true},
		{"truncated rune", "a\xe2\x9c", "a\uFFFD", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, replaced := proc.Sanitize([]byte(tt.in))
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.wantReplaced, replaced)
		})
	}
}

func TestCutAtRune(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		n        int
		want     string
	}{
		{"shorter than n", "abc", 5, "abc"},
		{"ASCII cut", "abcdef", 3, "abc"},
		{"cut inside a rune backs off", "a✓b", 2, "a"},
		{"cut after a rune", "a✓b", 4, "a✓"},
		{"zero", "abc", 0, ""},
		{"negative", "abc", -1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, proc.CutAtRune(tt.in, tt.n))
		})
	}
}
