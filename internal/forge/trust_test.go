package forge_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/forge"
)

// people is a forge that answers Permission and TeamMember from maps, and
// counts the questions.
type people struct {
	forge.Forge
	mu    sync.Mutex
	perms map[string]forge.Permission
	teams map[string][]string
	asked int
	err   error
}

func (p *people) Permission(_ context.Context, user string) (forge.Permission, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked++
	return p.perms[user], p.err
}

func (p *people) TeamMember(_ context.Context, team, user string) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked++
	members, ok := p.teams[team]
	if !ok {
		return false, forge.ErrNotFound
	}
	for _, m := range members {
		if m == user {
			return true, nil
		}
	}
	return false, p.err
}

func newPeople() *people {
	return &people{
		perms: map[string]forge.Permission{"writer": forge.PermissionWrite, "reader": forge.PermissionRead,
			"maintainer": forge.PermissionMaintain, "owner": forge.PermissionAdmin},
		teams: map[string][]string{"acme/reviewers": {"reader"}},
	}
}

func TestTrust_Check(t *testing.T) {
	t.Parallel()
	write := forge.TrustPolicy{MinPermission: forge.PermissionWrite}
	cases := []struct {
		name    string
		policy  forge.TrustPolicy
		user    string
		trusted bool
		reason  string
	}{
		{"a writer by default", write, "writer", true, "write access to acme/widgets"},
		{"an owner by default", write, "owner", true, "admin access to acme/widgets"},
		{"a reader is not", write, "reader", false, "may not write to acme/widgets (read access)"},
		{"a stranger is not", write, "stranger", false, "may not write to acme/widgets (no role in it)"},
		{"no author is not", write, "", false, "no author"},
		{"a listed user without write access", forge.TrustPolicy{MinPermission: forge.PermissionWrite,
			Users: []string{"Stranger"}}, "stranger", true, "listed in forge.trusted.users"},
		{"a team member without write access", forge.TrustPolicy{MinPermission: forge.PermissionWrite,
			Teams: []string{"acme/reviewers"}}, "reader", true, "member of team acme/reviewers"},
		{"a writer when maintainers only", forge.TrustPolicy{MinPermission: forge.PermissionMaintain},
			"writer", false, "write access to acme/widgets, and forge.trusted asks for maintain"},
		{"a maintainer when maintainers only", forge.TrustPolicy{MinPermission: forge.PermissionMaintain},
			"maintainer", true, "maintain access to acme/widgets"},
		{"a writer outside the lists when only they count", forge.TrustPolicy{Users: []string{"someone"}},
			"writer", false, "not listed in forge.trusted"},
		{"the zero policy trusts no one", forge.TrustPolicy{}, "owner", false, "not listed in forge.trusted"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := forge.Trust{Forge: newPeople(), Repository: "acme/widgets", Policy: tc.policy}
			v, err := tr.Check(context.Background(), tc.user)
			require.NoError(t, err)
			require.Equal(t, tc.trusted, v.Trusted)
			require.Equal(t, tc.reason, v.Reason)
			require.Equal(t, tc.user, v.User)
		})
	}
}

func TestTrust_ListsOnlyAskNothingOfTheForge(t *testing.T) {
	t.Parallel()
	p := newPeople()
	tr := forge.Trust{Forge: p, Repository: "acme/widgets", Policy: forge.TrustPolicy{Users: []string{"bot"}}}
	v, err := tr.Check(context.Background(), "writer")
	require.NoError(t, err)
	require.False(t, v.Trusted)
	require.Zero(t, p.asked, "permission none: the forge's permissions are not asked")
}

func TestTrust_AForgeThatWillNotAnswerTrustsNoOne(t *testing.T) {
	t.Parallel()
	p := newPeople()
	p.err = forge.ErrUnauthorized
	tr := forge.Trust{Forge: p, Repository: "acme/widgets", Policy: forge.TrustPolicy{MinPermission: forge.PermissionWrite}}
	v, err := tr.Check(context.Background(), "writer")
	require.ErrorIs(t, err, forge.ErrUnauthorized)
	require.False(t, v.Trusted)
	require.Contains(t, err.Error(), "acme/widgets")
}

func TestTrust_AnUnknownTeamIsAnErrorThatNamesIt(t *testing.T) {
	t.Parallel()
	tr := forge.Trust{Forge: newPeople(), Repository: "acme/widgets",
		Policy: forge.TrustPolicy{MinPermission: forge.PermissionWrite, Teams: []string{"acme/nobody"}}}
	_, err := tr.Check(context.Background(), "stranger")
	require.ErrorIs(t, err, forge.ErrNotFound)
	require.True(t, strings.Contains(err.Error(), "acme/nobody"), err.Error())
	v, err := tr.Check(context.Background(), "writer")
	require.NoError(t, err, "a writer is trusted before any team is asked")
	require.True(t, v.Trusted)
}

func TestTrustCache_AnswersForAtMostItsTTL(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	p := newPeople()
	tr := forge.Trust{Forge: p, Repository: "acme/widgets", Cache: forge.NewTrustCache(time.Minute, clock),
		Policy: forge.TrustPolicy{MinPermission: forge.PermissionWrite, Teams: []string{"acme/reviewers"}}}
	ctx := context.Background()
	for range 3 {
		v, err := tr.Check(ctx, "writer")
		require.NoError(t, err)
		require.True(t, v.Trusted)
		v, err = tr.Check(ctx, "reader")
		require.NoError(t, err)
		require.True(t, v.Trusted)
	}
	require.Equal(t, 3, p.asked, "writer's permission, reader's, reader's team: once each")

	// The forge withdraws writer's access: it counts until the answer is a
	// minute old, not after.
	p.mu.Lock()
	p.perms["writer"] = forge.PermissionRead
	p.mu.Unlock()
	now = now.Add(59 * time.Second)
	v, err := tr.Check(ctx, "writer")
	require.NoError(t, err)
	require.True(t, v.Trusted)
	now = now.Add(time.Second)
	v, err = tr.Check(ctx, "writer")
	require.NoError(t, err)
	require.False(t, v.Trusted, "an answer lasts one poll interval at most")
}

func TestTrustCache_ErrorsAreNotRemembered(t *testing.T) {
	t.Parallel()
	p := newPeople()
	p.err = errors.New("forge down")
	tr := forge.Trust{Forge: p, Repository: "acme/widgets", Cache: forge.NewTrustCache(time.Hour, nil),
		Policy: forge.TrustPolicy{MinPermission: forge.PermissionWrite}}
	_, err := tr.Check(context.Background(), "writer")
	require.Error(t, err)
	p.mu.Lock()
	p.err = nil
	p.mu.Unlock()
	v, err := tr.Check(context.Background(), "writer")
	require.NoError(t, err)
	require.True(t, v.Trusted)
}

func TestPermission_NamesRoundTrip(t *testing.T) {
	t.Parallel()
	for p := forge.PermissionNone; p <= forge.PermissionAdmin; p++ {
		got, err := forge.ParsePermission(p.String())
		require.NoError(t, err)
		require.Equal(t, p, got)
	}
	_, err := forge.ParsePermission("owner")
	require.Error(t, err)
}
