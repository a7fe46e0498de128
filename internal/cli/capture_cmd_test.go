package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/sqlite"
)

const captureIDPattern = `cap-[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}`

// captureStdin runs the command line with stdin, which Run does not take:
// it returns stdout and the error Run would print and map to an exit code.
func captureStdin(t *testing.T, env map[string]string, stdin io.Reader, args ...string) (string, error) {
	t.Helper()
	full := map[string]string{"HOME": t.TempDir()}
	for k, v := range env {
		full[k] = v
	}
	var stdout, stderr bytes.Buffer
	a := &app{stdout: &stdout, stderr: &stderr, getenv: func(k string) string { return full[k] }}
	root := a.rootCmd()
	root.SetIn(stdin)
	root.SetArgs(args)
	err := root.ExecuteContext(t.Context())
	return stdout.String(), err
}

// captureEnv is a data dir with Temporal unreachable: capture add stores
// the capture and warns, and never hands it to a server that happens to
// run here.
func captureEnv(t *testing.T) map[string]string {
	return offlineEnv(t)
}

func listCaptures(t *testing.T, env map[string]string, args ...string) []domain.CaptureBuffer {
	t.Helper()
	res := azolla(t, env, append([]string{"capture", "list", "--output", "json"}, args...)...)
	require.Equal(t, 0, res.code, res.stderr)
	var list []domain.CaptureBuffer
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &list))
	return list
}

// captureEvents counts the CAPTURE_READY events of each capture.
func captureEvents(t *testing.T, env map[string]string) map[string]int {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(env["AZOLLA_DATA_DIR"], "azolla.db"))
	require.NoError(t, err)
	defer s.Close()
	evs, err := s.ListEvents(t.Context(), store.ListEventsParams{EventType: domain.EventCaptureReady})
	require.NoError(t, err)
	out := map[string]int{}
	for _, ev := range evs {
		require.Equal(t, store.CaptureReadySeq, ev.TransitionSeq)
		out[ev.SubjectID]++
	}
	return out
}

// Text, a file and stdin each make one PENDING capture, stored as written,
// its id printed alone and its one CAPTURE_READY event written with it.
func TestCaptureAdd_TextFileAndStdinEachStoreOnePendingCaptureWithItsEvent(t *testing.T) {
	t.Parallel()
	env := captureEnv(t)
	fileText := "Plan the offsite\n- book rooms\n- send agenda\n"
	path := writeFile(t, t.TempDir(), "note.txt", fileText)

	byText := azolla(t, env, "capture", "add", "Call the bank asap")
	require.Equal(t, 0, byText.code, byText.stderr)
	require.Regexp(t, `^`+captureIDPattern+`\n$`, byText.stdout, "the id alone on stdout, for scripts")
	byFile := azolla(t, env, "capture", "add", "--file", path, "--source", "email")
	require.Equal(t, 0, byFile.code, byFile.stderr)
	byStdin, err := captureStdin(t, env, strings.NewReader("from a pipe\n"), "capture", "add", "-")
	require.NoError(t, err)
	byFileStdin, err := captureStdin(t, env, strings.NewReader("from --file -"), "capture", "add", "--file", "-")
	require.NoError(t, err)

	ids := []string{byText.stdout, byFile.stdout, byStdin, byFileStdin}
	for i := range ids {
		ids[i] = strings.TrimSuffix(ids[i], "\n")
	}
	want := map[string]struct{ source, content string }{
		ids[0]: {"cli", "Call the bank asap"}, ids[1]: {"email", fileText},
		ids[2]: {"cli", "from a pipe\n"}, ids[3]: {"cli", "from --file -"},
	}
	list := listCaptures(t, env)
	require.Len(t, list, 4)
	for _, c := range list {
		w, ok := want[c.CaptureBufferID]
		require.True(t, ok, "unexpected capture %s", c.CaptureBufferID)
		require.Equal(t, domain.CapturePending, c.Status)
		require.Equal(t, w.source, c.Source)
		require.Equal(t, w.content, c.Content)
	}
	require.Equal(t, map[string]int{ids[0]: 1, ids[1]: 1, ids[2]: 1, ids[3]: 1}, captureEvents(t, env))

	require.Len(t, listCaptures(t, env, "--status", "PENDING"), 4)
	require.Empty(t, listCaptures(t, env, "--status", "PROCESSED"))
	text := azolla(t, env, "capture", "list")
	require.Equal(t, 0, text.code, text.stderr)
	require.Contains(t, text.stdout, ids[1])
	require.Contains(t, text.stdout, "Plan the offsite", "the first line of the capture")
	require.NotContains(t, text.stdout, "book rooms")
}

// Hostile text is stored as written and never reaches the terminal raw:
// the list escapes it, and JSON carries it escaped.
func TestCaptureAdd_HostileTextIsStoredAsWrittenAndListedEscaped(t *testing.T) {
	t.Parallel()
	env := captureEnv(t)
	text := "\x1b]0;pwned\x07\x1b[31mred\x1b[0m rlo\u202e\nsecond line"
	res := azolla(t, env, "capture", "add", text)
	require.Equal(t, 0, res.code, res.stderr)

	listed := azolla(t, env, "capture", "list")
	require.Equal(t, 0, listed.code, listed.stderr)
	requireNoRawControls(t, listed.stdout)
	require.Contains(t, listed.stdout, `\x1b]0;pwned\x07\x1b[31mred\x1b[0m rlo\u202e`)
	asJSON := azolla(t, env, "capture", "list", "--output", "json")
	require.Equal(t, 0, asJSON.code, asJSON.stderr)
	requireNoRawControls(t, asJSON.stdout)
	list := listCaptures(t, env)
	require.Len(t, list, 1)
	require.Equal(t, text, list[0].Content, "stored as written")
}

// Input that cannot be a capture exits 2 naming why, and stores nothing.
func TestCaptureAdd_InvalidInputIsRefusedAndStoresNothing(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", maxCaptureBytes+1)
	cases := []struct {
		name, want string
		args       []string
		file       string
	}{
		{name: "nothing", want: `give the capture as TEXT, "-" for stdin, or --file F`},
		{name: "text and file", args: []string{"note", "--file", "x"}, want: "not both"},
		{name: "two texts", args: []string{"a", "b"}, want: "accepts at most 1 arg"},
		{name: "empty", args: []string{" \n\t"}, want: "capture is empty"},
		{name: "too large text", args: []string{big}, want: "capture is larger than 65536 bytes (64 KiB)"},
		{name: "too large file", file: big, want: "capture is larger than 65536 bytes (64 KiB)"},
		{name: "NUL", args: []string{"a\x00b"}, want: "capture holds a NUL byte at byte 1"},
		{name: "invalid UTF-8", file: "ok \xff", want: "invalid byte 0xff at byte 3"},
		{name: "missing file", args: []string{"--file", "/nonexistent/note"}, want: "no such file"},
		{name: "empty source", args: []string{"note", "--source", ""}, want: "--source must not be empty"},
		{name: "hostile source", args: []string{"note", "--source", "a\x1b[31m"}, want: "control character U+001B at byte 1"},
		{name: "long source", args: []string{"note", "--source", strings.Repeat("s", 101)}, want: "--source is 101 bytes, at most 100"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := captureEnv(t)
			args := append([]string{"capture", "add"}, tc.args...)
			if tc.file != "" {
				args = append(args, "--file", writeFile(t, t.TempDir(), "note", tc.file))
			}
			res := azolla(t, env, args...)
			require.Equal(t, exitUsage, res.code, res.stderr)
			require.Contains(t, res.stderr, tc.want)
			require.Empty(t, res.stdout)
			require.Empty(t, listCaptures(t, env))
		})
	}
}

// A huge stdin is refused after reading one byte past the bound, not
// read whole.
func TestCaptureAdd_TooLargeStdinIsRefusedWithoutReadingItAll(t *testing.T) {
	t.Parallel()
	env := captureEnv(t)
	in := &countingReader{r: strings.NewReader(strings.Repeat("y", 4*maxCaptureBytes))}
	out, err := captureStdin(t, env, in, "capture", "add", "-")
	require.ErrorContains(t, err, "capture is larger than 65536 bytes")
	var ee *exitError
	require.True(t, errors.As(err, &ee))
	require.Equal(t, exitUsage, ee.code)
	require.Empty(t, out)
	require.LessOrEqual(t, in.n, maxCaptureBytes+1+32<<10, "read about the bound, not the whole input")
	require.Empty(t, listCaptures(t, env))
}

func TestCaptureList_UnknownStatusIsAUsageError(t *testing.T) {
	t.Parallel()
	res := azolla(t, captureEnv(t), "capture", "list", "--status", "DONE")
	require.Equal(t, exitUsage, res.code)
	require.Contains(t, res.stderr, `--status must be one of PENDING, PROCESSED, got "DONE"`)
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}
