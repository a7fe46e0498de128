package gitlab_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/forge/gitlab"
	"github.com/azolla/azolla/internal/forge/gitlab/gitlabfake"
)

func TestPermission_MapsGitLabAccessLevels(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		role  string
		level int
		want  forge.Permission
	}{
		{"minimal access", gitlabfake.AccessMinimal, forge.PermissionNone},
		{"guest", gitlabfake.AccessGuest, forge.PermissionRead},
		{"planner", gitlabfake.AccessPlanner, forge.PermissionRead},
		{"reporter", gitlabfake.AccessReporter, forge.PermissionRead},
		{"developer", gitlabfake.AccessDeveloper, forge.PermissionWrite},
		{"maintainer", gitlabfake.AccessMaintainer, forge.PermissionMaintain},
		{"owner", gitlabfake.AccessOwner, forge.PermissionAdmin},
	} {
		t.Run(tc.role, func(t *testing.T) {
			t.Parallel()
			b := setup(t, gitlabfake.Options{})
			b.fake.SetAccess("someone", tc.level)
			p, err := b.forge.Permission(context.Background(), "someone")
			require.NoError(t, err)
			require.Equal(t, tc.want, p)
		})
	}
}

func TestPermission_NoOneIsNoneWithoutError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		user string
		// asked: how many times the members endpoint was asked (and
		// answered 404).
		asked int
	}{
		{"a user who is not a member", gitlabfake.Stranger, 1},
		{"a user GitLab does not know", "no-such-user", 0},
		{"no user", " ", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, gitlabfake.Options{})
			p, err := b.forge.Permission(context.Background(), tc.user)
			require.NoError(t, err)
			require.Equal(t, forge.PermissionNone, p)
			require.Equal(t, tc.asked, membersAsked(b.fake))
		})
	}
}

func TestPermission_ABlockedMemberIsNone(t *testing.T) {
	t.Parallel()
	b := setup(t, gitlabfake.Options{})
	b.fake.SetState(gitlabfake.Maintainer, "blocked")
	p, err := b.forge.Permission(context.Background(), gitlabfake.Maintainer)
	require.NoError(t, err)
	require.Equal(t, forge.PermissionNone, p)
}

// A user's id, then their role: both through the project's URL-encoded
// path and the user's id.
func TestPermission_AsksTheInheritedMembership(t *testing.T) {
	t.Parallel()
	b := setup(t, gitlabfake.Options{Project: "azolla-org/platform/widgets"})
	p, err := b.forge.Permission(context.Background(), gitlabfake.Reader)
	require.NoError(t, err)
	require.Equal(t, forge.PermissionRead, p)
	var paths []string
	for _, r := range b.fake.Requests() {
		paths = append(paths, r.Method+" "+r.Path+"?"+r.Query.Encode())
	}
	require.Equal(t, []string{
		"GET /api/v4/users?username=reader",
		"GET /api/v4/projects/azolla-org%2Fplatform%2Fwidgets/members/all/4?",
	}, paths)
}

func TestPermission_WaitsOutARateLimit(t *testing.T) {
	t.Parallel()
	b := setup(t, gitlabfake.Options{})
	b.fake.Throttle(gitlabfake.Limit{Requests: 2, RetryAfter: 5 * time.Second})
	p, err := b.forge.Permission(context.Background(), gitlabfake.Reviewer)
	require.NoError(t, err)
	require.Equal(t, forge.PermissionWrite, p)
	require.Equal(t, []time.Duration{5 * time.Second, 5 * time.Second}, b.sleep.Slept())
}

func TestTeamMember_ActiveMembersOfTheGroupOrItsParents(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		edit func(*gitlabfake.Server)
		user string
		want bool
	}{
		{"a member", nil, gitlabfake.Reader, true},
		{"a member of its parent group", nil, gitlabfake.Maintainer, true},
		{"a guest", func(f *gitlabfake.Server) { f.SetGroupAccess(gitlabfake.Team, "guest", gitlabfake.AccessGuest) },
			"guest", true},
		{"a user with minimal access", func(f *gitlabfake.Server) {
			f.SetGroupAccess(gitlabfake.Team, "minimal", gitlabfake.AccessMinimal)
		}, "minimal", false},
		{"a blocked member", func(f *gitlabfake.Server) { f.SetState(gitlabfake.Reader, "blocked") },
			gitlabfake.Reader, false},
		{"a member of the project only", nil, gitlabfake.Reviewer, false},
		{"a stranger", nil, gitlabfake.Stranger, false},
		{"a user GitLab does not know", nil, "no-such-user", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, gitlabfake.Options{})
			if tc.edit != nil {
				tc.edit(b.fake)
			}
			in, err := b.forge.TeamMember(context.Background(), gitlabfake.Team, tc.user)
			require.NoError(t, err)
			require.Equal(t, tc.want, in)
		})
	}
}

func TestTeamMember_AsksTheGroupByItsEncodedPathFirst(t *testing.T) {
	t.Parallel()
	b := setup(t, gitlabfake.Options{})
	_, err := b.forge.TeamMember(context.Background(), "/acme/readers/", gitlabfake.Reader)
	require.NoError(t, err)
	var paths []string
	for _, r := range b.fake.Requests() {
		paths = append(paths, r.Method+" "+r.Path+"?"+r.Query.Encode())
	}
	require.Equal(t, []string{
		"GET /api/v4/groups/acme%2Freaders?with_projects=false",
		"GET /api/v4/users?username=reader",
		"GET /api/v4/groups/acme%2Freaders/members/all/4?",
	}, paths)
}

func TestTeamMember_AnUnknownGroupIsNotFoundByName(t *testing.T) {
	t.Parallel()
	b := setup(t, gitlabfake.Options{})
	for _, team := range []string{"acme/writers", "nowhere", ""} {
		_, err := b.forge.TeamMember(context.Background(), team, gitlabfake.Reader)
		require.ErrorIs(t, err, forge.ErrNotFound, team)
		require.ErrorContains(t, err, team)
	}
	require.Zero(t, membersAsked(b.fake), "no member is looked up in a group that is not there")
}

func TestPermissionAndTeamMember_ARefusedTokenIsUnauthorized(t *testing.T) {
	t.Parallel()
	const wrong = "glpat-wrong-secret-0123456789"
	fake := gitlabfake.New(t, gitlabfake.Options{})
	f, err := gitlab.New(gitlab.Options{BaseURL: fake.URL, Project: fake.Options().Project, Token: wrong})
	require.NoError(t, err)
	_, perr := f.Permission(context.Background(), gitlabfake.Reader)
	_, terr := f.TeamMember(context.Background(), gitlabfake.Team, gitlabfake.Reader)
	for _, err := range []error{perr, terr} {
		require.ErrorIs(t, err, forge.ErrUnauthorized)
		require.NotContains(t, err.Error(), wrong)
	}
}

func TestPullRequest_AuthorIsWhoOpenedIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, gitlabfake.Options{})
	b.fake.Push("azolla/mine")
	b.fake.Push("azolla/theirs")
	mine, _, err := b.forge.OpenOrAdopt(ctx, forge.NewPullRequest{Head: "azolla/mine", Base: "main", Title: "t", Body: "b"})
	require.NoError(t, err)
	require.Equal(t, b.fake.Options().Username, mine.Author)
	n, err := b.fake.Open("azolla/theirs", "By hand", gitlabfake.Maintainer)
	require.NoError(t, err)
	theirs, err := b.forge.PullRequest(ctx, n)
	require.NoError(t, err)
	require.Equal(t, gitlabfake.Maintainer, theirs.Author)
	adopted, created, err := b.forge.OpenOrAdopt(ctx, forge.NewPullRequest{Head: "azolla/theirs", Base: "main", Title: "t", Body: "b"})
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, gitlabfake.Maintainer, adopted.Author, "adopting keeps who opened it")
}

// membersAsked is how many times the fake was asked for a member.
func membersAsked(fake *gitlabfake.Server) int {
	n := 0
	for _, r := range fake.Requests() {
		if strings.Contains(r.Path, "/members/all/") {
			n++
		}
	}
	return n
}
