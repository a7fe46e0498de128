package github

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	gh "github.com/google/go-github/v89/github"

	"github.com/azolla/azolla/internal/forge"
)

// roleNames maps GitHub's repository roles, as role_name names them, to
// the seam's permissions. A custom role is none of these.
var roleNames = map[string]forge.Permission{
	"admin":    forge.PermissionAdmin,
	"maintain": forge.PermissionMaintain,
	"write":    forge.PermissionWrite,
	"triage":   forge.PermissionRead,
	"read":     forge.PermissionRead,
}

// legacyPermissions maps the legacy permission field, the base role every
// role (a custom one too) comes down to, maintain read as write and triage
// as read.
var legacyPermissions = map[string]forge.Permission{
	"admin": forge.PermissionAdmin,
	"write": forge.PermissionWrite,
	"read":  forge.PermissionRead,
	"none":  forge.PermissionNone,
}

// Permission implements forge.Forge with "get repository permissions for
// a user", which counts every grant: the repository's, its teams', the
// organisation's and the enterprise's. The package comment says how roles
// map and what the token needs.
func (f *Forge) Permission(ctx context.Context, user string) (forge.Permission, error) {
	if !mayBeLogin(user) {
		return forge.PermissionNone, nil
	}
	var level *gh.RepositoryPermissionLevel
	err := f.do(ctx, func(ctx context.Context) (resp *gh.Response, err error) {
		// go-github puts the name into the path as given: escaped, a name
		// with a slash or a question mark stays one segment.
		level, resp, err = f.client.Repositories.GetPermissionLevel(ctx, f.owner, f.repo, url.PathEscape(user))
		return resp, err
	})
	switch {
	case errors.Is(err, forge.ErrNotFound):
		// Not a collaborator, or no such user.
		return forge.PermissionNone, nil
	case err != nil:
		return forge.PermissionNone, fmt.Errorf("github: reading %s's permission on %s/%s: %w", user, f.owner, f.repo, err)
	}
	p, err := permission(level.GetRoleName(), level.GetPermission())
	if err != nil {
		return forge.PermissionNone, fmt.Errorf("github: reading %s's permission on %s/%s: %w", user, f.owner, f.repo, err)
	}
	return p, nil
}

// permission maps GitHub's answer: the role by its name when it is one of
// GitHub's own, else (a custom role) the legacy permission it comes down
// to. An answer that is neither is an error, not a guess.
func permission(roleName, legacy string) (forge.Permission, error) {
	if p, ok := roleNames[roleName]; ok {
		return p, nil
	}
	if p, ok := legacyPermissions[legacy]; ok {
		return p, nil
	}
	return forge.PermissionNone, fmt.Errorf("GitHub answered role %q with permission %q, neither of which azolla knows",
		roleName, legacy)
}

// mayBeLogin says whether some account could have user as its login. One
// that cannot is no one, and GitHub is not asked: go-github refuses a path
// with ".." in it, and no login has a dot.
func mayBeLogin(user string) bool {
	return strings.TrimSpace(user) != "" && !strings.Contains(user, "..")
}

// TeamMember implements forge.Forge: team is "org/team-slug". The team is
// read first, so that one GitHub does not know, or does not show azolla's
// account, is forge.ErrNotFound; then the user's membership, where 404 is
// no membership. Only an active membership counts: a pending one is an
// invitation not yet accepted.
func (f *Forge) TeamMember(ctx context.Context, team, user string) (bool, error) {
	org, slug, ok := strings.Cut(team, "/")
	if !ok || org == "" || slug == "" || strings.Contains(slug, "/") {
		return false, fmt.Errorf("github: team %q is not organisation/team-slug", team)
	}
	err := f.do(ctx, func(ctx context.Context) (*gh.Response, error) {
		_, resp, err := f.client.Teams.GetTeamBySlug(ctx, url.PathEscape(org), url.PathEscape(slug))
		return resp, err
	})
	if err != nil {
		return false, fmt.Errorf("github: looking up team %s: %w", team, err)
	}
	if !mayBeLogin(user) {
		return false, nil
	}
	var m *gh.Membership
	err = f.do(ctx, func(ctx context.Context) (resp *gh.Response, err error) {
		m, resp, err = f.client.Teams.GetTeamMembershipBySlug(ctx, url.PathEscape(org), url.PathEscape(slug),
			url.PathEscape(user))
		return resp, err
	})
	switch {
	case errors.Is(err, forge.ErrNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("github: reading %s's membership of team %s: %w", user, team, err)
	}
	return m.GetState() == "active", nil
}
