package github_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/forge/github"
)

const collaboratorsPath = "/repos/" + fakeOwner + "/" + fakeRepo + "/collaborators/"

func TestPermission_RoleNameElseTheLegacyPermission(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		login string
		role  string // given to login first; "" leaves the fake's own
		want  forge.Permission
	}{
		{name: "admin is admin", login: "azolla-bot", want: forge.PermissionAdmin},
		{name: "maintain is maintain, not the write GitHub's legacy field says", login: "maintainer",
			want: forge.PermissionMaintain},
		{name: "write is write", login: "reviewer", want: forge.PermissionWrite},
		{name: "triage is read", login: "triager", role: "triage", want: forge.PermissionRead},
		{name: "read is read", login: "reader", want: forge.PermissionRead},
		{name: "a custom role on maintain is the legacy write", login: "releaser", role: "release-manager",
			want: forge.PermissionWrite},
		{name: "a custom role on read is read", login: "inspector", role: "auditor", want: forge.PermissionRead},
		{name: "logins are not case sensitive", login: "Reviewer", want: forge.PermissionWrite},
		{name: "not a collaborator is no one", login: "stranger", want: forge.PermissionNone},
		{name: "a user GitHub does not know is no one", login: "no-such-user", want: forge.PermissionNone},
		{name: "no name is no one", login: " ", want: forge.PermissionNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, "")
			if tc.role != "" {
				b.fake.setRole(tc.login, tc.role)
			}
			got, err := b.forge.Permission(context.Background(), tc.login)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// A name is data: escaped, it stays one path segment, whatever it holds.
func TestPermission_ANameIsOnePathSegment(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	got, err := b.forge.Permission(context.Background(), "orgs/acme/teams/readers?x=1#")
	require.NoError(t, err)
	require.Equal(t, forge.PermissionNone, got)
	require.Equal(t, []string{"GET " + collaboratorsPath + "orgs%2Facme%2Fteams%2Freaders%3Fx=1%23/permission"},
		b.fake.requests("GET "+collaboratorsPath))

	got, err = b.forge.Permission(context.Background(), "../../../orgs/acme")
	require.NoError(t, err, "no login has a dot: no one")
	require.Equal(t, forge.PermissionNone, got)
	require.Len(t, b.fake.requests("GET "+collaboratorsPath), 1, "and GitHub is not asked")
}

func TestPermission_ARefusalIsUnauthorized(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		token string
	}{
		{name: "401 bad credentials", token: "ghp_RevokedLongAgo000000000000000000"},
		{name: "403 without push access", token: readerToken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, "", func(o *github.Options) { o.Token = tc.token })
			got, err := b.forge.Permission(context.Background(), "reviewer")
			require.ErrorIs(t, err, forge.ErrUnauthorized)
			require.Equal(t, forge.PermissionNone, got)
			require.NotContains(t, err.Error(), tc.token)
		})
	}
}

func TestTeamMember_OnlyAnActiveMembershipCounts(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	for _, tc := range []struct {
		user string
		want bool
	}{
		{user: "reader", want: true},
		{user: "maintainer", want: true}, // the team's maintainer
		{user: "READER", want: true},
		{user: "reviewer", want: false}, // invited, not yet accepted
		{user: "stranger", want: false},
		{user: "no-such-user", want: false},
	} {
		got, err := b.forge.TeamMember(context.Background(), fakeOwner+"/readers", tc.user)
		require.NoError(t, err, tc.user)
		require.Equal(t, tc.want, got, tc.user)
	}
}

func TestTeamMember_AnUnknownTeamIsNotFound(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		token string
		team  string
	}{
		{name: "no such team", token: azollaToken, team: fakeOwner + "/writers"},
		{name: "no such organisation", token: azollaToken, team: "elsewhere/readers"},
		{name: "a team GitHub does not show the token", token: strangerToken, team: fakeOwner + "/readers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, "", func(o *github.Options) { o.Token = tc.token })
			in, err := b.forge.TeamMember(context.Background(), tc.team, "reader")
			require.ErrorIs(t, err, forge.ErrNotFound)
			require.Contains(t, err.Error(), tc.team, "the error names the team")
			require.False(t, in)
		})
	}
}

func TestTeamMember_AMalformedTeamIsRefusedUnasked(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	for _, team := range []string{"", "readers", fakeOwner + "/", "/readers", fakeOwner + "/readers/all"} {
		_, err := b.forge.TeamMember(context.Background(), team, "reader")
		require.Error(t, err, "%q", team)
		require.False(t, errors.Is(err, forge.ErrNotFound), "%q is a mistake in the name, not a team GitHub lacks", team)
	}
	require.Empty(t, b.fake.requests("GET /orgs/"))
}

func TestTeamMember_ARefusalIsUnauthorized(t *testing.T) {
	t.Parallel()
	b := setup(t, "", func(o *github.Options) { o.Token = "ghp_RevokedLongAgo000000000000000000" })
	_, err := b.forge.TeamMember(context.Background(), fakeOwner+"/readers", "reader")
	require.ErrorIs(t, err, forge.ErrUnauthorized)
}

// The opener of a pull request is its author, however it was opened and
// read.
func TestPullRequest_AuthorIsWhoOpenedIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, "")
	b.fake.push("azolla/by-hand")
	n := b.fake.humanOpens("azolla/by-hand", "By hand")
	got, err := b.forge.PullRequest(ctx, n)
	require.NoError(t, err)
	require.Equal(t, "maintainer", got.Author)
	b.fake.push("azolla/by-azolla")
	adopted, _, err := b.forge.OpenOrAdopt(ctx, forge.NewPullRequest{Head: "azolla/by-hand", Base: fakeBase, Title: "x"})
	require.NoError(t, err)
	require.Equal(t, "maintainer", adopted.Author, "adopting does not make azolla its author")
	updated, err := b.forge.Update(ctx, n, "New title", "new body")
	require.NoError(t, err)
	require.Equal(t, "maintainer", updated.Author)
	opened, _, err := b.forge.OpenOrAdopt(ctx, forge.NewPullRequest{Head: "azolla/by-azolla", Base: fakeBase, Title: "x"})
	require.NoError(t, err)
	require.Equal(t, "azolla-bot", opened.Author)
}
