package gitlabfake

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// SetAccess gives username access level in the project (AccessNone: no
// membership), making the user if the fake does not know them.
func (s *Server) SetAccess(username string, level int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setAccessLocked(username, level)
}

func (s *Server) setAccessLocked(username string, level int) {
	s.userLocked(username)
	if level == AccessNone {
		delete(s.members, username)
		return
	}
	s.members[username] = membership{level: level, since: s.tick()}
}

// SetGroupAccess gives username access level in the group at path
// (AccessNone: no membership), making the group, and the user, if the
// fake does not know them. A group's parent is the group at its path's
// parent, when there is one.
func (s *Server) SetGroupAccess(path, username string, level int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setGroupAccessLocked(path, username, level)
}

func (s *Server) setGroupAccessLocked(path, username string, level int) {
	s.userLocked(username)
	g := s.groupNamed(path)
	if g == nil {
		g = &group{id: s.nextID(), path: path, created: s.tick(), members: map[string]membership{}}
		if parent, ok := parentPath(path); ok {
			if p := s.groupNamed(parent); p != nil {
				g.parentID = p.id
			}
		}
		s.groups = append(s.groups, g)
	}
	if level == AccessNone {
		delete(g.members, username)
		return
	}
	g.members[username] = membership{level: level, since: s.tick()}
}

// SetState sets username's account state: active, blocked, deactivated.
func (s *Server) SetState(username, state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.userLocked(username).state = state
}

// userLocked returns the user named username, made if the fake does not
// know them, with a token of their own.
func (s *Server) userLocked(username string) *user {
	if u := s.userNamed(username); u != nil {
		return u
	}
	token := "glpat-fake-" + username + "-token"
	if username == s.opt.Username {
		token = s.opt.Token
	}
	u := &user{id: len(s.users) + 1, username: username, token: token, state: "active"}
	s.users = append(s.users, u)
	return u
}

func (s *Server) userNamed(username string) *user {
	i := slices.IndexFunc(s.users, func(u *user) bool { return strings.EqualFold(u.username, username) })
	if i < 0 {
		return nil
	}
	return s.users[i]
}

func (s *Server) groupNamed(path string) *group {
	i := slices.IndexFunc(s.groups, func(g *group) bool { return strings.EqualFold(g.path, path) })
	if i < 0 {
		return nil
	}
	return s.groups[i]
}

// parentPath is the path of a group's parent: path without its last
// segment.
func parentPath(path string) (string, bool) {
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return "", false
	}
	return path[:i], true
}

// group answers 404 for a group the fake does not have, by id or by its
// full path (which arrives URL-encoded: acme%2Freaders).
func (s *Server) group(h func(http.ResponseWriter, *http.Request, *group)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		s.mu.Lock()
		var g *group
		if i := slices.IndexFunc(s.groups, func(g *group) bool {
			return id == strconv.Itoa(g.id) || strings.EqualFold(id, g.path)
		}); i >= 0 {
			g = s.groups[i]
		}
		s.mu.Unlock()
		if g == nil {
			writeJSON(w, http.StatusNotFound, map[string]string{"message": "404 Group Not Found"})
			return
		}
		h(w, r, g)
	}
}

func (s *Server) getGroup(w http.ResponseWriter, r *http.Request, g *group) {
	s.mu.Lock()
	defer s.mu.Unlock()
	writeJSON(w, http.StatusOK, s.groupJSON(g, r.URL.Query().Get("with_projects") != "false"))
}

// getGroupMember answers a member of the group or of one of its
// ancestors, at the highest level they hold among them, as GitLab's
// members/all does.
func (s *Server) getGroupMember(w http.ResponseWriter, r *http.Request, g *group) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.userByID(r.PathValue("user_id"))
	var (
		best  membership
		found bool
	)
	for path, more := g.path, u != nil; more; path, more = parentPath(path) {
		if a := s.groupNamed(path); a != nil {
			if m, ok := a.members[u.username]; ok && m.level > best.level {
				best, found = m, true
			}
		}
	}
	if !found {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "404 Not found"})
		return
	}
	writeJSON(w, http.StatusOK, s.memberJSON(u.username, best))
}

// getProjectMember answers a member of the project. The fake keeps the
// project's members as one list: whether a role is the project's own or
// inherited from a group is not told apart.
func (s *Server) getProjectMember(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.userByID(r.PathValue("user_id"))
	if u == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "404 Not found"})
		return
	}
	m, ok := s.members[u.username]
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "404 Not found"})
		return
	}
	writeJSON(w, http.StatusOK, s.memberJSON(u.username, m))
}

func (s *Server) userByID(id string) *user {
	i := slices.IndexFunc(s.users, func(u *user) bool { return strconv.Itoa(u.id) == id })
	if i < 0 {
		return nil
	}
	return s.users[i]
}

// level is username's access level in the project.
func (s *Server) level(username string) int {
	return s.members[username].level
}
