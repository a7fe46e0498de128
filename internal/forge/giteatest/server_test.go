package giteatest

import (
	"context"
	"database/sql"
	"net/http"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	Prepare()
	os.Exit(m.Run())
}

func TestStart_ServesAndCloseLeavesNothingBehind(t *testing.T) {
	RequirePostgres(t)
	ctx := context.Background()
	s, err := Start(ctx, Options{})
	require.NoError(t, err)
	db, dir := s.pg.name, s.workDir

	var me struct {
		Login   string `json:"login"`
		IsAdmin bool   `json:"is_admin"`
	}
	require.NoError(t, s.API(ctx, s.Reviewer.Token, http.MethodGet, "/user", nil, &me))
	require.Equal(t, s.Reviewer.Name, me.Login)
	require.False(t, me.IsAdmin)
	require.NoError(t, s.API(ctx, s.Admin.Token, http.MethodGet, "/user", nil, &me))
	require.True(t, me.IsAdmin)

	require.NoError(t, s.Close())
	admin, err := sql.Open("pgx", PostgresDSN())
	require.NoError(t, err)
	defer admin.Close()
	var n int
	require.NoError(t, admin.QueryRowContext(ctx, "SELECT count(*) FROM pg_database WHERE datname = $1", db).Scan(&n))
	require.Zero(t, n, "the database is dropped")
	require.NoDirExists(t, dir)
	_, err = http.Get(s.URL + "/api/v1/version")
	require.Error(t, err, "nothing answers on the port any more")
}
