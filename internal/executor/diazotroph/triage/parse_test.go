package triage_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/diazotroph/triage"
	"github.com/azolla/azolla/internal/textsafe"
)

func endOfDay(s string) *time.Time {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	d = d.Add(24*time.Hour - time.Second)
	return &d
}

func TestTriage_Parse(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 300)
	cases := []struct {
		name     string
		content  string
		title    string
		criteria []string
		urgency  string
		due      *time.Time
		notes    int
	}{
		{"title is the first non-empty line", "\n\n  The fetcher should retry  \nmore words\n", "The fetcher should retry", []string{}, "NORMAL", nil, 0},
		{"bullets become criteria", "Add retry\r\n- retries 3 times\r\n  - backs off\r\n-not a bullet\n- \n* star", "Add retry", []string{"retries 3 times", "backs off"}, "NORMAL", nil, 0},
		{"a bullet title loses its dash", "- fix login\n- works on mobile", "fix login", []string{"works on mobile"}, "NORMAL", nil, 0},
		{"urgent in any case", "Fix prod\nthis is URGENT", "Fix prod", []string{}, "CRITICAL", nil, 0},
		{"asap in any case", "call back Asap.", "call back Asap.", []string{}, "CRITICAL", nil, 0},
		{"urgent inside a bullet", "Fix\n- urgent: today", "Fix", []string{"urgent: today"}, "CRITICAL", nil, 0},
		{"urgently is another word", "urgently needed? no", "urgently needed? no", []string{}, "NORMAL", nil, 0},
		{"not urgent", "tidy docs, not urgent", "tidy docs, not urgent", []string{}, "NORMAL", nil, 0},
		{"non-urgent", "a non-urgent chore", "a non-urgent chore", []string{}, "NORMAL", nil, 0},
		{"due date", "Ship it by 2026-12-01", "Ship it by 2026-12-01", []string{}, "NORMAL", endOfDay("2026-12-01"), 0},
		{"due date, By in any case and tabs", "Ship\nBY\t2026-03-05.", "Ship", []string{}, "NORMAL", endOfDay("2026-03-05"), 0},
		{"earliest date wins", "x by 2026-12-01\n- by 2026-11-30", "x by 2026-12-01", []string{"by 2026-11-30"}, "NORMAL", endOfDay("2026-11-30"), 0},
		{"invalid date ignored with a note", "x by 2026-02-30", "x by 2026-02-30", []string{}, "NORMAL", nil, 1},
		{"month 13 ignored with a note", "x by 2026-13-01 and by 2026-01-02", "x by 2026-13-01 and by 2026-01-02", []string{}, "NORMAL", endOfDay("2026-01-02"), 1},
		{"not a date shape", "x by 26-12-01, by 2026-12-011, nearby 2026-12-01, by2026-12-01", "x by 26-12-01, by 2026-12-011, nearby 2026-12-01, by2026-12-01", []string{}, "NORMAL", nil, 0},
		{"urgent and due", "asap by 2027-01-31", "asap by 2027-01-31", []string{}, "CRITICAL", endOfDay("2027-01-31"), 0},
		{"hostile controls are escaped", "\x1b]0;pwned\x07\x1b[31mred\u202e\x00\n- a\u009bb\u2066", `\x1b]0;pwned\x07\x1b[31mred\u202e\x00`, []string{`a\u009bb\u2066`}, "NORMAL", nil, 0},
		{"invalid UTF-8 is escaped", "bad \xff byte", `bad \xff byte`, []string{}, "NORMAL", nil, 0},
		{"long title is cut", long, strings.Repeat("x", triage.MaxTitleRunes-1) + "…", []string{}, "NORMAL", nil, 0},
		{"too many criteria", "t\n" + strings.Repeat("- c\n", triage.MaxCriteria+2), "t", repeat("c", triage.MaxCriteria), "NORMAL", nil, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, notes, err := triage.Parse(triage.Capture{CaptureBufferID: "cap-1", Source: "cli", Content: tc.content})
			require.NoError(t, err)
			require.Equal(t, "cap-1", p.CaptureBufferID)
			require.Equal(t, tc.title, p.Title)
			require.Equal(t, tc.criteria, p.AcceptanceCriteria)
			require.Equal(t, tc.urgency, p.Urgency)
			require.Equal(t, tc.due, p.DueAt)
			require.Len(t, notes, tc.notes, "%q", notes)
			require.NoError(t, textsafe.CheckLine(p.Title))
			for _, c := range p.AcceptanceCriteria {
				require.NoError(t, textsafe.CheckLine(c))
			}
			for _, n := range notes {
				require.NoError(t, textsafe.CheckLine(n))
			}
		})
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestTriage_ParseOfBlankCaptureIsErrEmptyCapture(t *testing.T) {
	t.Parallel()
	for _, content := range []string{"", " ", "\n\t\r\n  \n"} {
		_, _, err := triage.Parse(triage.Capture{CaptureBufferID: "cap-1", Content: content})
		require.ErrorIs(t, err, triage.ErrEmptyCapture, "%q", content)
	}
}

func TestTriage_DueAtIsEndOfDayUTC(t *testing.T) {
	t.Parallel()
	p, _, err := triage.Parse(triage.Capture{CaptureBufferID: "cap-1", Content: "by 2026-12-01"})
	require.NoError(t, err)
	require.Equal(t, "2026-12-01T23:59:59Z", p.DueAt.Format(time.RFC3339Nano))
}
