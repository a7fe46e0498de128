package cli

import (
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
)

// offlineEnv is a data dir with Temporal at a port nobody listens on, so
// the commands that need it fail fast and the others show they don't.
func offlineEnv(t *testing.T) map[string]string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return map[string]string{"AZOLLA_DATA_DIR": t.TempDir(), "AZOLLA_TEMPORAL_ADDRESS": addr}
}

func listObjectives(t *testing.T, env map[string]string) []domain.Objective {
	t.Helper()
	res := azolla(t, env, "objective", "list", "--output", "json")
	require.Equal(t, 0, res.code, res.stderr)
	var list []domain.Objective
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &list))
	return list
}

// Invalid input exits 2 and stores nothing. Only a mistake in the command
// line itself (a missing or conflicting flag, a malformed flag value) shows
// the usage text; an invalid record or an unreadable file does not.
func TestObjectiveCreate_InvalidInputChangesNothing(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, want string
		args       []string
		file       string
		usage      bool
	}{
		{name: "no title", args: nil, want: "--title is required", usage: true},
		{name: "hostile id", args: []string{"--title", "x", "--id", "../x"}, want: "/objective_id"},
		{name: "id with a dot", args: []string{"--title", "x", "--id", "a..b"}, want: "/objective_id"},
		{name: "id like a flag", args: []string{"--title", "x", "--id=-x"}, want: "/objective_id"},
		{name: "unknown urgency", args: []string{"--title", "x", "--urgency", "SOON"}, want: "/urgency"},
		{name: "bad due time", args: []string{"--title", "x", "--due", "tomorrow"}, usage: true,
			want: `--due "tomorrow" is not an RFC 3339 timestamp such as 2026-12-01T17:00:00Z or 2026-12-01T19:00:00+02:00`},
		{name: "due without an offset", args: []string{"--title", "x", "--due", "2026-12-01T10:00:00"}, usage: true,
			want: "is not an RFC 3339 timestamp"},
		{name: "unknown flag", args: []string{"--title", "x", "--colour", "red"}, usage: true, want: "unknown flag: --colour"},
		{name: "file with an offset due time", file: `{"title": "x", "due_at": "2026-12-01T10:00:00+02:00"}`, want: "/due_at"},
		{name: "file not JSON", file: "{", want: "not a JSON object"},
		{name: "file skips approval", file: `{"title": "x", "status": "TODO"}`, want: "status must be NEW"},
		{name: "file unknown field", file: `{"title": "x", "colour": "red"}`, want: "colour"},
		{name: "file and flags", file: `{"title": "x"}`, args: []string{"--title", "y"}, want: "cannot be combined", usage: true},
		{name: "id like a lock", args: []string{"--title", "x", "--id", "x.lock"}, want: "/objective_id"},
		{name: "id with a space", args: []string{"--title", "x", "--id", "a b"}, want: "/objective_id"},
		{name: "repository like an option", args: []string{"--title", "x", "--repository=--upload-pack=touch owned"},
			want: "invalid repository"},
		{name: "remote helper repository", args: []string{"--title", "x", "--repository", "ext::sh -c touch% owned"},
			want: "invalid repository"},
		{name: "hostile base branch", args: []string{"--title", "x", "--repository", "/srv/app", "--base-branch", "a..b"},
			want: "/base_branch"},
		{name: "unknown generator", args: []string{"--title", "x", "--generator", "gpt"}, want: "/generator"},
		{name: "missing patch file", args: []string{"--title", "x", "--patch-file", "/nonexistent/p.diff"},
			want: "--patch-file"},
		{name: "file and patch flag", file: `{"title": "x"}`, args: []string{"--generator", "static"},
			want: "cannot be combined", usage: true},
		{name: "missing file", args: []string{"--file", "/nonexistent/o.json"}, want: "open /nonexistent/o.json"},
		// A single-line field a terminal would obey is refused, naming the
		// field and the character.
		{name: "OSC in the title", args: []string{"--title", "x\x1b]0;pwned\x07"},
			want: "invalid objective: /title: must be one line without control characters: control character U+001B at byte 1"},
		{name: "CSI in the title", args: []string{"--title", "\x1b[31mred"}, want: "/title: must be one line"},
		{name: "NUL in the title", args: []string{"--title", "a\x00b"}, want: "/title: must be one line"},
		{name: "newline in the title", args: []string{"--title", "one\ntwo"}, want: "/title: must be one line"},
		{name: "right-to-left override in a criterion", args: []string{"--title", "x", "--criteria", "ok", "--criteria", "a\u202eb"},
			want: "/acceptance_criteria/1: must be one line without control characters: control character U+202E at byte 1"},
		{name: "escape in a blocker", args: []string{"--title", "x", "--blocker", "\x1b[2J"}, want: "/blockers/0: must be one line"},
		{name: "escape in a file's title", file: `{"title": "x\u001b]0;pwned\u0007"}`, want: "/title: must be one line"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := offlineEnv(t)
			args := append([]string{"objective", "create"}, tc.args...)
			if tc.file != "" {
				args = append(args, "--file", writeFile(t, t.TempDir(), "o.json", tc.file))
			}
			res := azolla(t, env, args...)
			require.Equal(t, exitUsage, res.code, res.stderr)
			require.Contains(t, res.stderr, tc.want)
			require.Equal(t, 1, strings.Count(strings.SplitN(res.stderr, "\n\n", 2)[0], "azolla:"), "one line: %s", res.stderr)
			requireNoRawControls(t, res.stderr)
			if tc.usage {
				require.Contains(t, res.stderr, "Usage:")
			} else {
				require.NotContains(t, res.stderr, "Usage:")
				require.Equal(t, 1, countLines(res.stderr), "only the error: %s", res.stderr)
			}
			require.Empty(t, listObjectives(t, env))
		})
	}
}

func TestObjectiveCreate_StoresWhileTemporalIsDown(t *testing.T) {
	t.Parallel()
	env := offlineEnv(t)
	file := writeFile(t, t.TempDir(), "o.json", `{"objective_id": "from-file", "title": "Fix the login page",
		"acceptance_criteria": ["users can log in"], "urgency": "HIGH"}`)
	res := azolla(t, env, "objective", "create", "--file", file, "--output", "json")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stderr, "warning", "Temporal being down is said")
	var o domain.Objective
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &o))
	require.Equal(t, "from-file", o.ObjectiveID)
	require.Equal(t, domain.StatusNew, o.Status)

	res = azolla(t, env, "objective", "create", "--title", "Fix the login page", "--criteria", "a", "--criteria", "b")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "created objective fix-the-login-page-")
	require.Contains(t, res.stdout, "objective approve fix-the-login-page-")

	list := listObjectives(t, env)
	require.Len(t, list, 2)
	require.Equal(t, []string{"a", "b"}, list[1].AcceptanceCriteria)

	res = azolla(t, env, "objective", "create", "--file", file)
	require.Equal(t, exitRefused, res.code, "a taken id: %s", res.stderr)
	require.Len(t, listObjectives(t, env), 2)
}

func TestObjectiveCommands_UnknownIDIsOneClearLine(t *testing.T) {
	t.Parallel()
	env := offlineEnv(t)
	for _, args := range [][]string{
		{"objective", "show", "nope"}, {"objective", "approve", "nope"}, {"objective", "reject", "nope"},
		{"objective", "retry", "nope"}, {"objective", "unblock", "nope"}, {"objective", "watch", "nope"},
		{"objective", "resume", "nope"},
	} {
		res := azolla(t, env, args...)
		require.Equal(t, exitNotFound, res.code, "%v: %s", args, res.stderr)
		require.Equal(t, `azolla: get objective: objective "nope" not found`+"\n", res.stderr, "%v", args)
	}
}

func TestObjectiveCommands_TemporalDownIsExit5(t *testing.T) {
	t.Parallel()
	env := offlineEnv(t)
	require.Equal(t, 0, azolla(t, env, "objective", "create", "--title", "x", "--id", "x").code)
	res := azolla(t, env, "objective", "approve", "x")
	require.Equal(t, exitUnavailable, res.code, res.stderr)
	require.Contains(t, res.stderr, "connect to Temporal at "+env["AZOLLA_TEMPORAL_ADDRESS"])

	res = azolla(t, env, "objective", "show", "x", "--output", "json")
	require.Equal(t, 0, res.code, "show reads the store without Temporal: %s", res.stderr)
	var d objectiveDetail
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &d))
	require.Equal(t, "x", d.Objective.ObjectiveID)
	require.Nil(t, d.Lifecycle)
	require.Contains(t, d.LifecycleError, "connect to Temporal")
}

func TestObjectiveList_StatusFilter(t *testing.T) {
	t.Parallel()
	env := offlineEnv(t)
	require.Equal(t, 0, azolla(t, env, "objective", "create", "--title", "x", "--id", "x").code)
	res := azolla(t, env, "objective", "list", "--status", "DONE", "--output", "json")
	require.Equal(t, 0, res.code, res.stderr)
	require.JSONEq(t, `[]`, res.stdout)
	res = azolla(t, env, "objective", "list", "--status", "NEW")
	require.Equal(t, 0, res.code, res.stderr)
	require.Contains(t, res.stdout, "x ")
	res = azolla(t, env, "objective", "list", "--status", "FINISHED")
	require.Equal(t, exitUsage, res.code)
	require.Contains(t, res.stderr, "--status must be one of")
}

func TestObjectiveCreate_RepositoryTargetWithAPatchFile(t *testing.T) {
	env := offlineEnv(t)
	work := t.TempDir()
	t.Chdir(work)
	writeFile(t, work, "app/README.md", "x\n")
	patch := "--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-x\n+y\n"
	patchFile := writeFile(t, work, "fix.diff", patch)
	res := azolla(t, env, "objective", "create", "--title", "Fix it", "--id", "fix-it", "--repository", "app",
		"--base-branch", "release/v1", "--patch-file", patchFile, "--output", "json")
	require.Equal(t, 0, res.code, res.stderr)
	var o domain.Objective
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &o))
	require.Equal(t, filepath.Join(work, "app"), o.Repository, "a local path is made absolute")
	require.Equal(t, "release/v1", o.BaseBranch)
	require.Equal(t, "static", o.Generator, "a patch file implies the static generator")
	require.Equal(t, patch, o.Patch)

	res = azolla(t, env, "objective", "show", "fix-it")
	require.Contains(t, res.stdout, "generator   static, with a 50-byte patch")
}

// --due takes an RFC 3339 timestamp with any offset and stores the same
// instant in UTC.
func TestObjectiveCreate_DueTakesAnyOffsetAndStoresUTC(t *testing.T) {
	t.Parallel()
	env := offlineEnv(t)
	cases := map[string]string{
		"2026-12-01T10:00:00+02:00":     "2026-12-01T08:00:00Z",
		"2026-12-01T10:00:00Z":          "2026-12-01T10:00:00Z",
		"2026-12-01T10:00:00-05:30":     "2026-12-01T15:30:00Z",
		"2026-12-31T23:30:00.25-01:00":  "2027-01-01T00:30:00.25Z",
		"2026-12-01T10:00:00.1234567Z":  "2026-12-01T10:00:00.123456Z",
		"2026-12-01T00:00:00.000+00:00": "2026-12-01T00:00:00Z",
	}
	i := 0
	for due, want := range cases {
		i++
		id := fmt.Sprintf("due-%d", i)
		res := azolla(t, env, "objective", "create", "--title", "x", "--id", id, "--due", due, "--output", "json")
		require.Equal(t, 0, res.code, "%s: %s", due, res.stderr)
		var o domain.Objective
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &o))
		require.NotNil(t, o.DueAt, due)
		require.Equal(t, want, o.DueAt.Format(time.RFC3339Nano), due)
		require.Equal(t, time.UTC, o.DueAt.Location(), due)

		res = azolla(t, env, "objective", "show", id, "--output", "json")
		require.Equal(t, 0, res.code, res.stderr)
		require.Contains(t, res.stdout, `"due_at": "`+want+`"`, "stored in UTC: %s", due)
	}
}
