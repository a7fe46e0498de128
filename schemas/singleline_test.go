package schemas_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/textsafe"
	"github.com/azolla/azolla/schemas"
)

// A single-line field that holds a control character is refused with an
// error that names the field and the character, not a regular expression.
func TestSingleLine_ErrorNamesTheFieldAndTheCharacter(t *testing.T) {
	t.Parallel()
	const must = ": must be one line without control characters: "
	cases := []struct {
		kind    schemas.Kind
		fixture string
		want    string
	}{
		{schemas.Objective, "invalid_title_osc_csi.json", "/title" + must + "control character U+001B at byte 1"},
		{schemas.Objective, "invalid_title_nul.json", "/title" + must + "control character U+0000 at byte 3"},
		{schemas.Objective, "invalid_title_rlo.json", "/title" + must + "control character U+202E at byte 8"},
		{schemas.Objective, "invalid_title_newline.json", "/title" + must + "control character U+000A at byte 6"},
		{schemas.Objective, "invalid_criterion_csi.json", "/acceptance_criteria/0" + must + "control character U+001B at byte 8"},
		{schemas.Objective, "invalid_criterion_rlo.json", "/acceptance_criteria/1" + must + "control character U+202E at byte 6"},
		{schemas.PauseState, "invalid_action_osc.json", "/prioritized_actions/0" + must + "control character U+001B at byte 7"},
		{schemas.PauseState, "invalid_action_rlo.json", "/prioritized_actions/0" + must + "control character U+202E at byte 7"},
		{schemas.ContextSnapshot, "invalid_yield_by_esc.json", "/related_yield_refs/1/by" + must + "control character U+001B at byte 3"},
		{schemas.JobLease, "invalid_worker_id_c1.json", "/worker_id" + must + "control character U+0085 at byte 8"},
	}
	for _, tc := range cases {
		t.Run(string(tc.kind)+"/"+tc.fixture, func(t *testing.T) {
			t.Parallel()
			err := schemas.ValidateJSON(tc.kind, readFixture(t, tc.kind, tc.fixture))
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
			require.NotContains(t, err.Error(), "pattern", "the regular expression is not the message")
			require.Equal(t, err.Error(), textsafe.Line(err.Error()), "the message itself is safe to print")
		})
	}
}

// The schema refuses exactly what textsafe escapes, so a record the schema
// accepts prints unchanged and one it refuses would have been escaped.
func TestSingleLine_RefusesExactlyWhatTextsafeEscapes(t *testing.T) {
	t.Parallel()
	for r := rune(0); r < 0x2200; r++ { // past the last bidi isolate, U+2069
		s := "a" + string(r) + "b"
		err := schemas.Validate(schemas.CaptureBuffer, map[string]any{
			"capture_buffer_id": "cap-1", "source": s, "content": "x", "status": "PENDING",
			"created_at": "2026-11-21T17:41:58Z", "updated_at": "2026-11-21T17:41:58Z"})
		if textsafe.CheckLine(s) == nil {
			require.NoError(t, err, "%U", r)
		} else {
			require.Error(t, err, "%U", r)
			require.Contains(t, err.Error(), fmt.Sprintf("/source: must be one line without control characters: control character %U at byte 1", r))
		}
	}
}
