package gitlab

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/azolla/azolla/internal/forge"
)

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// notes builds notes with ids 1, 2, … a second apart.
func notes(ns ...gl.Note) []*gl.Note {
	out := make([]*gl.Note, len(ns))
	for i := range ns {
		n := ns[i]
		n.ID = int64(i + 1)
		at := t0.Add(time.Duration(i) * time.Second)
		n.CreatedAt = &at
		out[i] = &n
	}
	return out
}

func by(user, body string) gl.Note {
	return gl.Note{Author: gl.NoteAuthor{Username: user}, Body: body}
}

func system(user, body string) gl.Note {
	n := by(user, body)
	n.System = true
	return n
}

func diff(user, path string, newLine, oldLine int64, body string) gl.Note {
	n := by(user, body)
	n.Type = gl.DiffNote
	n.Position = &gl.NotePosition{HeadSHA: "head1", NewPath: path, OldPath: path, NewLine: newLine, OldLine: oldLine}
	return n
}

// summary is a review in a line: author:state:body:number of comments.
func summary(rs []forge.Review) []string {
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%s:%s:%s:%d", r.Author, r.State, r.Body, len(r.Comments)))
	}
	return out
}

func TestFoldReviews(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		notes []*gl.Note
		since int64
		want  []string
	}{{
		name: "a submitted review is one review",
		notes: notes(diff("rita", "a.go", 1, 0, "Rename."), diff("rita", "b.go", 3, 0, "Check."),
			by("rita", "Two things."), system("rita", "requested changes")),
		want: []string{"rita:changes_requested:Two things.:2"},
	}, {
		name:  "a verdict alone is a review",
		notes: notes(system("rita", "approved this merge request")),
		want:  []string{"rita:approved::0"},
	}, {
		name:  "notes without a verdict are a comment",
		notes: notes(by("rita", "Hm."), by("rita", "Also this.")),
		want:  []string{"rita:commented:Hm.\n\nAlso this.:0"},
	}, {
		name: "a note by someone else ends a review",
		notes: notes(by("rita", "First."), by("max", "Agreed."), by("rita", "Second."),
			system("rita", "approved this merge request")),
		want: []string{"rita:commented:First.:0", "max:commented:Agreed.:0", "rita:approved:Second.:0"},
	}, {
		name:  "azolla's notes are no review, and end one",
		notes: notes(by("rita", "Before."), by("azolla-bot", "Round 2."), by("rita", "After.")),
		want:  []string{"rita:commented:Before.:0", "rita:commented:After.:0"},
	}, {
		name: "other system notes neither start nor end a review",
		notes: notes(system("azolla-bot", "added 1 commit"), by("rita", "One."),
			system("max", "changed the description"), by("rita", "Two."), system("rita", "requested changes")),
		want: []string{"rita:changes_requested:One.\n\nTwo.:0"},
	}, {
		name: "requesting changes withdraws an approval: two verdicts",
		notes: notes(system("rita", "approved this merge request"), system("rita", "requested changes"),
			system("rita", "unapproved this merge request")),
		want: []string{"rita:approved::0", "rita:changes_requested::0", "rita:dismissed::0"},
	}, {
		name:  "a verdict's words are GitLab's system note, not a comment's",
		notes: notes(by("rita", "approved this merge request"), by("rita", "requested changes")),
		want:  []string{"rita:commented:approved this merge request\n\nrequested changes:0"},
	}, {
		name:  "only notes after the cursor",
		notes: notes(by("rita", "Old."), system("rita", "approved this merge request"), by("max", "New.")),
		since: 2,
		want:  []string{"max:commented:New.:0"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, last := foldReviews(tc.notes, tc.since, "azolla-bot")
			require.Equal(t, tc.want, summary(got))
			require.Equal(t, int64(len(tc.notes)), last)
		})
	}
}

func TestFoldReviews_IDsTimesAndLineComments(t *testing.T) {
	t.Parallel()
	ns := notes(by("max", "Other."), diff("rita", "a.go", 0, 7, "Why removed?"), diff("rita", "b.go", 4, 0, "Nice."),
		by("rita", "Summary."), system("rita", "approved this merge request"))
	// GitLab's order is created_at; the fold's is the id's.
	ns[0], ns[3] = ns[3], ns[0]
	got, last := foldReviews(ns, 0, "azolla-bot")
	require.Equal(t, int64(5), last)
	require.Len(t, got, 2)
	r := got[1]
	require.Equal(t, "2", r.ID, "the first note's id")
	require.Equal(t, t0.Add(4*time.Second), r.SubmittedAt, "the verdict's time")
	require.Equal(t, "head1", r.CommitSHA)
	require.Equal(t, []forge.ReviewComment{
		{ID: "2", Author: "rita", Path: "a.go", Line: 0, OldLine: 7, Body: "Why removed?"},
		{ID: "3", Author: "rita", Path: "b.go", Line: 4, Body: "Nice."},
	}, r.Comments)
}

func TestFoldReviews_NothingNewKeepsTheCursor(t *testing.T) {
	t.Parallel()
	got, last := foldReviews(notes(by("rita", "Old.")), 1, "azolla-bot")
	require.Empty(t, got)
	require.Equal(t, int64(1), last)
	require.Equal(t, forge.Cursor("1"), cursor(last))
}

func TestFoldReviews_ANoteOnTwoPagesIsReadOnce(t *testing.T) {
	t.Parallel()
	ns := notes(diff("rita", "a.go", 1, 0, "Once."), system("rita", "requested changes"))
	got, _ := foldReviews(append(ns, ns[0]), 0, "azolla-bot")
	require.Equal(t, []string{"rita:changes_requested::1"}, summary(got))
}

func TestParseCursor(t *testing.T) {
	t.Parallel()
	id, err := parseCursor("")
	require.NoError(t, err)
	require.Zero(t, id)
	id, err = parseCursor("12345")
	require.NoError(t, err)
	require.Equal(t, int64(12345), id)
	for _, bad := range []forge.Cursor{"x", "-1", "1.5"} {
		_, err := parseCursor(bad)
		require.Error(t, err, bad)
	}
}

func TestMergeable(t *testing.T) {
	t.Parallel()
	for status, want := range map[string]*bool{
		"mergeable": new(true), "checking": nil, "unchecked": nil, "preparing": nil, "": nil,
		"conflict": new(false), "draft_status": new(false), "ci_must_pass": new(false),
		"not_approved": new(false), "not_open": new(false), "discussions_not_resolved": new(false),
	} {
		require.Equal(t, want, mergeable(status), status)
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		name    string
		headers map[string]string
		want    time.Duration
	}{
		{"seconds", map[string]string{"Retry-After": "42", "RateLimit-Reset": "1800000099"}, 42 * time.Second},
		{"an HTTP date", map[string]string{"Retry-After": now.Add(time.Minute).UTC().Format(http.TimeFormat)}, time.Minute},
		{"reset, without Retry-After", map[string]string{"RateLimit-Reset": "1800000030"}, 30 * time.Second},
		{"a reset gone by", map[string]string{"RateLimit-Reset": "1799999990"}, 0},
		{"neither", map[string]string{}, time.Minute},
	} {
		h := http.Header{}
		for k, v := range tc.headers {
			h.Set(k, v)
		}
		require.Equal(t, tc.want, retryAfter(h, now), tc.name)
	}
}
