package pause_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/schemas"
)

func TestTaskPauses_AreValidSubjectRecordsWithCommands(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	deadline := now.Add(-time.Hour)
	cases := map[string]struct {
		ps       domain.PauseState
		subject  string
		commands []string
	}{
		"proposals review": {pause.ProposalsReview("wo-ev-1", []pause.Proposed{{"t-1", "Fix login"}, {"t-2", "Add retry"}}, now),
			domain.SubjectTriage, []string{"az objective list --status NEW", "az objective approve t-1", "az objective approve t-2"}},
		"triage failed": {pause.TriageFailed("wo-ev-1", "invalid proposal\nmore", []string{"cap-1"}, now),
			domain.SubjectTriage, []string{"", "az objective create --help"}},
		"triage retried": {pause.TriageRetried("wo-ev-1", "invalid proposal\nmore", []string{"cap-1"}, now),
			domain.SubjectTriage, []string{"", "az objective create --help"}},
		"manifest ready": {pause.ManifestReady("wo-ev-2", []string{"Unblock o-1"}, now),
			domain.SubjectManifest, []string{"az manifest show wo-ev-2", ""}},
		"manifest failed": {pause.ManifestFailed("wo-ev-2", "no bundle", now),
			domain.SubjectManifest, []string{"", "az manifest request"}},
		"manifest blocked": {pause.ManifestBlocked("ev-m-1", "substrate unreachable", now),
			domain.SubjectManifest, []string{"", "az manifest request"}},
		"overdue": {pause.Overdue("overdue-o-1-x", "o-1", "Fix it", deadline, now),
			domain.SubjectObjective, []string{"az objective show o-1", ""}},
	}
	for name, tc := range cases {
		require.NoError(t, schemas.Validate(schemas.PauseState, tc.ps), name)
		require.Equal(t, tc.subject, tc.ps.Subject(), name)
		require.Len(t, tc.ps.ActionKinds, len(tc.ps.PrioritizedActions), name)
		for i, want := range tc.commands {
			require.Equal(t, want, pause.Command("az", &tc.ps, i), "%s action %d", name, i)
		}
	}
	pr := cases["proposals review"].ps
	require.Equal(t, "Review 2 proposed objectives", pr.PrioritizedActions[0])
	require.Equal(t, "Approve t-1 (Fix login): azolla objective approve t-1", pr.PrioritizedActions[1])
	require.Equal(t, "wo-ev-1", pr.SubjectID)
	require.Empty(t, pr.ObjectiveID)
	require.Equal(t, deadline, *cases["overdue"].ps.DeadlineAt)
}

func TestSubjectID_FitsTheSchema(t *testing.T) {
	t.Parallel()
	id := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:@-]{0,199}$`)
	require.Equal(t, "ps-triage-wo-1-PROPOSALS_REVIEW", pause.SubjectID(domain.SubjectTriage, "wo-1", domain.PauseProposalsReview))
	long := pause.SubjectID(domain.SubjectManifest, strings.Repeat("x", 200), domain.PauseManifestReady)
	require.Regexp(t, id, long)
	require.NotEqual(t, long, pause.SubjectID(domain.SubjectManifest, strings.Repeat("y", 200), domain.PauseManifestReady))
}
