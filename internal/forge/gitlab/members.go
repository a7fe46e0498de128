package gitlab

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/azolla/azolla/internal/forge"
)

// Permission implements forge.Forge with the project's members, inherited
// and invited ones included (doc.go maps the levels).
func (p *project) Permission(ctx context.Context, user string) (forge.Permission, error) {
	id, ok, err := p.userID(ctx, user)
	if err != nil || !ok {
		return forge.PermissionNone, err
	}
	m, err := call(ctx, p, fmt.Sprintf("read %s's role in %s", user, p.path), func(o ...gl.RequestOptionFunc) (*gl.ProjectMember, *gl.Response, error) {
		return p.api.ProjectMembers.GetInheritedProjectMember(p.path, id, o...)
	})
	if errors.Is(err, forge.ErrNotFound) {
		return forge.PermissionNone, nil // not a member
	}
	if err != nil {
		return forge.PermissionNone, err
	}
	return permission(m.AccessLevel, m.State), nil
}

// TeamMember implements forge.Forge: team is a group's full path.
func (p *project) TeamMember(ctx context.Context, team, user string) (bool, error) {
	path := strings.Trim(team, "/")
	if path == "" {
		return false, fmt.Errorf("gitlab: no group named: %w", forge.ErrNotFound)
	}
	// The members endpoint answers 404 both for a group it does not know
	// and for a user who is not a member: the group is asked for first.
	no := false
	if _, err := call(ctx, p, "read group "+path, func(o ...gl.RequestOptionFunc) (*gl.Group, *gl.Response, error) {
		//lint:ignore SA1019 API v4 still takes with_projects; without it the answer carries up to 100 projects.
		return p.api.Groups.GetGroup(path, &gl.GetGroupOptions{WithProjects: &no}, o...)
	}); err != nil {
		return false, err
	}
	id, ok, err := p.userID(ctx, user)
	if err != nil || !ok {
		return false, err
	}
	m, err := call(ctx, p, fmt.Sprintf("read %s's membership of group %s", user, path), func(o ...gl.RequestOptionFunc) (*gl.GroupMember, *gl.Response, error) {
		return p.api.GroupMembers.GetInheritedGroupMember(path, id, o...)
	})
	if errors.Is(err, forge.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return permission(m.AccessLevel, m.State) > forge.PermissionNone, nil
}

// permission maps a member's access level by the rules in doc.go. A member
// whose account is not active (blocked, deactivated, …) may do nothing;
// an answer without a state is taken as active.
func permission(level gl.AccessLevelValue, state string) forge.Permission {
	if state != "" && state != "active" {
		return forge.PermissionNone
	}
	switch {
	case level >= gl.OwnerPermissions:
		return forge.PermissionAdmin
	case level >= gl.MaintainerPermissions:
		return forge.PermissionMaintain
	case level >= gl.DeveloperPermissions:
		return forge.PermissionWrite
	case level >= gl.GuestPermissions: // Guest, Planner, Reporter
		return forge.PermissionRead
	default: // no access, minimal access
		return forge.PermissionNone
	}
}

// userID looks a user up by username (GET /users?username=); ok is false
// when GitLab knows no such user.
func (p *project) userID(ctx context.Context, username string) (id int64, ok bool, err error) {
	if strings.TrimSpace(username) == "" {
		return 0, false, nil // GET /users without a username lists everyone
	}
	users, err := call(ctx, p, "look up user "+username, func(o ...gl.RequestOptionFunc) ([]*gl.User, *gl.Response, error) {
		return p.api.Users.ListUsers(&gl.ListUsersOptions{Username: &username}, o...)
	})
	if err != nil {
		return 0, false, err
	}
	i := slices.IndexFunc(users, func(u *gl.User) bool { return strings.EqualFold(u.Username, username) })
	if i < 0 {
		return 0, false, nil
	}
	return users[i].ID, true, nil
}
