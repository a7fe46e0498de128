package storetest

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// rawStore is a store whose database can be written past the schema, as an
// older azolla (or a person) could have.
type rawStore interface {
	DB() *sql.DB
	Rebind(query string) string
}

// testRepairSingleLineFields: an objective stored before single-line fields
// refused control characters is rewritten by migration 4 with visible
// escapes, and can then take its next transition.
func testRepairSingleLineFields(t *testing.T, s store.Store) {
	ctx := context.Background()
	raw, ok := s.(rawStore)
	require.True(t, ok, "the backend exposes its database")
	require.NoError(t, s.CreateObjective(ctx, Objective("obj-1")))
	require.NoError(t, s.CreateObjective(ctx, Objective("obj-2")))
	exec := func(q string, args ...any) {
		_, err := raw.DB().ExecContext(ctx, raw.Rebind(q), args...)
		require.NoError(t, err)
	}
	exec(`UPDATE objectives SET title = $1, acceptance_criteria = $2, blockers = $3, blocker_ref = $4 WHERE objective_id = 'obj-1'`,
		"Fix\tthe \x1b[31mlogin", `["works\non two lines"]`, `["fatal: no such ref\nhint: fetch first"]`, "blockers:obj-1")
	exec(`DELETE FROM schema_migrations WHERE version = 4`)

	_, err := s.TransitionObjective(ctx, store.TransitionObjectiveParams{ObjectiveID: "obj-1",
		From: []domain.Status{domain.StatusNew}, To: domain.StatusTodo})
	requireViolation(t, err, "/title")

	applied, err := s.Migrate(ctx)
	require.NoError(t, err)
	require.Equal(t, []int{4}, applied)
	o, err := s.GetObjective(ctx, "obj-1")
	require.NoError(t, err)
	require.Equal(t, `Fix\x09the \x1b[31mlogin`, o.Title)
	require.Equal(t, []string{`works\x0aon two lines`}, o.AcceptanceCriteria)
	require.Equal(t, []string{`fatal: no such ref\x0ahint: fetch first`}, o.Blockers)
	require.Equal(t, domain.BlockersOf("obj-1"), o.BlockerRef, "what was valid is kept")
	_, err = s.TransitionObjective(ctx, store.TransitionObjectiveParams{ObjectiveID: "obj-1",
		From: []domain.Status{domain.StatusNew}, To: domain.StatusTodo})
	require.NoError(t, err, "the repaired objective moves on")

	untouched, err := s.GetObjective(ctx, "obj-2")
	require.NoError(t, err)
	require.Equal(t, Objective("obj-2").Title, untouched.Title)
	require.Equal(t, Objective("obj-2").UpdatedAt, untouched.UpdatedAt, "valid objectives are not rewritten")
}
