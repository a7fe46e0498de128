package gitea

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/azolla/azolla/internal/forge"
)

// accessModes maps Gitea's access modes, as its permission endpoint names
// them, to the seam's permissions.
var accessModes = map[string]forge.Permission{
	"none":  forge.PermissionNone,
	"read":  forge.PermissionRead,
	"write": forge.PermissionWrite,
	"admin": forge.PermissionAdmin,
	"owner": forge.PermissionAdmin,
}

// Permission implements forge.Forge with the collaborator permission
// endpoint, which answers for any user: a collaborator's own access, an
// organisation team's, a site administrator's, or what the repository
// gives everyone (read, on a public one). Only a repository administrator
// or a site administrator may ask it of others: azolla's account must be
// one (doc.go).
func (f *Forge) Permission(ctx context.Context, user string) (forge.Permission, error) {
	if strings.TrimSpace(user) == "" {
		return forge.PermissionNone, nil
	}
	var out struct {
		Permission string `json:"permission"`
	}
	path := f.repoPath + "/collaborators/" + url.PathEscape(user) + "/permission"
	_, err := f.do(ctx, http.MethodGet, path, nil, nil, &out)
	switch {
	case errors.Is(err, forge.ErrNotFound):
		return forge.PermissionNone, nil // no such user
	case err != nil:
		return forge.PermissionNone, err
	}
	p, ok := accessModes[out.Permission]
	if !ok {
		return forge.PermissionNone, fmt.Errorf("gitea: GET %s: unknown permission %q", path, out.Permission)
	}
	return p, nil
}

// TeamMember implements forge.Forge: team is "org/team", found by name
// among the organisation's teams. azolla's account must see the team's
// members: an owner of the organisation, or a site administrator.
func (f *Forge) TeamMember(ctx context.Context, team, user string) (bool, error) {
	org, name, ok := strings.Cut(team, "/")
	if !ok || org == "" || name == "" || strings.Contains(name, "/") {
		return false, fmt.Errorf("gitea: team %q is not org/team", team)
	}
	id, err := f.teamID(ctx, org, name)
	if err != nil {
		return false, err
	}
	path := "/teams/" + strconv.FormatInt(id, 10) + "/members/" + url.PathEscape(user)
	_, err = f.do(ctx, http.MethodGet, path, nil, nil, nil)
	switch {
	case errors.Is(err, forge.ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}

// teamID finds the team named name in org.
func (f *Forge) teamID(ctx context.Context, org, name string) (int64, error) {
	var out struct {
		Data []struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
		} `json:"data"`
	}
	path := "/orgs/" + url.PathEscape(org) + "/teams/search"
	if _, err := f.do(ctx, http.MethodGet, path, url.Values{"q": {name}, "limit": {"50"}}, nil, &out); err != nil {
		return 0, fmt.Errorf("gitea: team %s/%s: %w", org, name, err)
	}
	for _, t := range out.Data {
		if strings.EqualFold(t.Name, name) {
			return t.ID, nil
		}
	}
	return 0, fmt.Errorf("gitea: team %s/%s: %w", org, name, forge.ErrNotFound)
}
