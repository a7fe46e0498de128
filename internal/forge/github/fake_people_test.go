package github_test

// The fake's people: collaborators and their roles ("REST API endpoints
// for collaborators": check, 204 or 404; get repository permissions for a
// user) and the organisation's teams ("... for teams": get a team by name;
// "... for team members": get team membership for a user), as named at the
// top of fake_test.go. Every collaborator is a member of the organisation;
// the stranger is neither.

import (
	"net/http"
	"strconv"
	"strings"
)

const (
	docCollaborators = "https://docs.github.com/rest/collaborators/collaborators"
	docTeams         = "https://docs.github.com/rest/teams/teams#get-a-team-by-name"
	docTeamMembers   = "https://docs.github.com/rest/teams/members#get-team-membership-for-a-user"
)

// baseRoles are GitHub's own repository roles, each with the legacy
// permission the permission endpoint answers beside it: maintain counts
// as write, triage as read.
var baseRoles = map[string]string{"admin": "admin", "maintain": "write", "write": "write", "triage": "read", "read": "read"}

// rolePermissions is the permissions hash of a collaborator with each base
// role.
var rolePermissions = map[string]map[string]bool{
	"admin":    {"pull": true, "triage": true, "push": true, "maintain": true, "admin": true},
	"maintain": {"pull": true, "triage": true, "push": true, "maintain": true, "admin": false},
	"write":    {"pull": true, "triage": true, "push": true, "maintain": false, "admin": false},
	"triage":   {"pull": true, "triage": true, "push": false, "maintain": false, "admin": false},
	"read":     {"pull": true, "triage": false, "push": false, "maintain": false, "admin": false},
}

// roleOf is login's role_name in the repository, "" when not a
// collaborator. Logins are not case sensitive.
func (f *fakeGitHub) roleOf(login string) string { return f.roles[strings.ToLower(login)] }

// baseRole is the base role role is, or inherits when it is one of the
// organisation's custom roles.
func (f *fakeGitHub) baseRole(role string) string {
	if _, ok := baseRoles[role]; ok {
		return role
	}
	return f.customRoles[role]
}

// legacyPermission is the permission field beside role: none without one.
func (f *fakeGitHub) legacyPermission(role string) string {
	if p := baseRoles[f.baseRole(role)]; p != "" {
		return p
	}
	return "none"
}

// mayWrite says whether u may push: a role whose legacy permission is
// write or admin.
func (f *fakeGitHub) mayWrite(u *fakeUser) bool {
	p := f.legacyPermission(f.roleOf(u.login))
	return p == "write" || p == "admin"
}

// association is author_association of login's words.
func (f *fakeGitHub) association(login string) string {
	if f.roleOf(login) != "" {
		return "COLLABORATOR"
	}
	return "NONE"
}

// setRole gives login role (a base role or a custom one) in the
// repository; "" takes it away.
func (f *fakeGitHub) setRole(login, role string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if role == "" {
		delete(f.roles, strings.ToLower(login))
		return
	}
	f.roles[strings.ToLower(login)] = role
}

func (f *fakeGitHub) checkCollaborator(w http.ResponseWriter, r *http.Request, u *fakeUser) {
	if u == anonymous {
		requiresAuthentication(w)
		return
	}
	if f.roleOf(r.PathValue("username")) == "" {
		notFound(w, docCollaborators+"#check-if-a-user-is-a-repository-collaborator")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// jsonCollaborator is the documented "collaborator": a user with their
// permissions hash and role.
type jsonCollaborator struct {
	jsonUser
	Permissions map[string]bool `json:"permissions"`
	RoleName    string          `json:"role_name"`
}

// collaboratorPermission answers 200 with the collaborator's role_name and
// legacy permission, and 404 for anyone else, a user GitHub does not know
// included. GitHub answers it only to a caller with push access, others a
// 403 (the documentation lists 200 and 404; the 403's message is GitHub's).
func (f *fakeGitHub) collaboratorPermission(w http.ResponseWriter, r *http.Request, u *fakeUser) {
	const doc = docCollaborators + "#get-repository-permissions-for-a-user"
	if u == anonymous {
		requiresAuthentication(w)
		return
	}
	if !f.mayWrite(u) {
		writeError(w, http.StatusForbidden, "Must have push access to view collaborator permission.", doc)
		return
	}
	login := r.PathValue("username")
	role := f.roleOf(login)
	if role == "" {
		notFound(w, doc)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"permission": f.legacyPermission(role),
		"role_name":  role,
		"user": jsonCollaborator{jsonUser: f.user(login), Permissions: rolePermissions[f.baseRole(role)],
			RoleName: role},
	})
}

// team returns the team named in the path if u may see it (a member of the
// organisation may), or answers 404.
func (f *fakeGitHub) team(w http.ResponseWriter, r *http.Request, u *fakeUser, doc string) *fakeTeam {
	if u == anonymous {
		requiresAuthentication(w)
		return nil
	}
	t := f.teams[r.PathValue("team_slug")]
	if t == nil || f.roleOf(u.login) == "" {
		notFound(w, doc)
		return nil
	}
	return t
}

func (f *fakeGitHub) getTeam(w http.ResponseWriter, r *http.Request, u *fakeUser) {
	t := f.team(w, r, u, docTeams)
	if t == nil {
		return
	}
	url := f.srv.URL + f.prefix + "/teams/" + strconv.FormatInt(t.id, 10)
	const created = "2024-01-15T09:00:00Z"
	members := 0 // a pending invitation is not a member yet
	for _, m := range t.memberships {
		if m.state == "active" {
			members++
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": t.id, "node_id": "T_" + strconv.FormatInt(t.id, 10), "url": url,
		"html_url": "https://github.example/orgs/" + fakeOwner + "/teams/" + t.slug,
		"name":     t.name, "slug": t.slug, "description": nil, "privacy": "closed",
		"notification_setting": "notifications_enabled", "permission": "pull",
		"members_url": url + "/members{/member}", "repositories_url": url + "/repos",
		"parent": nil, "members_count": members, "repos_count": 1,
		"created_at": created, "updated_at": created,
		"organization": map[string]any{"login": fakeOwner, "id": 7, "node_id": "O_" + fakeOwner,
			"url": f.srv.URL + f.prefix + "/orgs/" + fakeOwner, "type": "Organization"},
	})
}

// getTeamMembership answers a member's role and state, active or pending,
// and 404 for a user with no membership.
func (f *fakeGitHub) getTeamMembership(w http.ResponseWriter, r *http.Request, u *fakeUser) {
	t := f.team(w, r, u, docTeamMembers)
	if t == nil {
		return
	}
	login := r.PathValue("username")
	m, ok := t.memberships[strings.ToLower(login)]
	if !ok {
		notFound(w, docTeamMembers)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"url":  f.srv.URL + f.prefix + "/teams/" + strconv.FormatInt(t.id, 10) + "/memberships/" + f.user(login).Login,
		"role": m.role, "state": m.state,
	})
}
