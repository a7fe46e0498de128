package gitlabfake

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// The fake's state: the few fields of GitLab's records it keeps.
type (
	user struct {
		id       int
		username string
		token    string
		state    string // active, blocked, deactivated
	}

	// membership is a user's role in the project or a group.
	membership struct {
		level int // an access level, Access*
		since time.Time
	}

	group struct {
		id       int
		path     string // the full path, "acme/readers"
		parentID int    // 0: a top-level group
		created  time.Time
		members  map[string]membership // by username
	}

	mergeRequest struct {
		id, iid          int
		title, body      string
		state            string // opened, closed, merged
		source, target   string
		sha              string
		author           string
		reviewers        []string
		labels           []string
		approvedBy       []string
		created, updated time.Time
		mergedAt         *time.Time
		closedAt         *time.Time
		mergedBy         string
		closedBy         string
		mergeCommit      string
		// checked: GitLab has computed mergeability since the last push.
		checked bool
	}

	// issue is an issue: GitLab numbers a project's issues (iid) apart
	// from its merge requests.
	issue struct {
		id, iid          int
		title, body      string
		state            string // opened, closed
		author           string
		labels           []string
		assignees        []string
		created, updated time.Time
		closedAt         *time.Time
		closedBy         string
	}

	// note is a note on merge request iid, or on issue iid when onIssue.
	note struct {
		id, iid  int
		onIssue  bool
		author   string
		body     string
		system   bool
		kind     string // "", DiffNote
		position *position
		created  time.Time
		updated  time.Time
	}

	position struct {
		baseSHA, headSHA string
		path             string
		newLine, oldLine int
	}

	commitStatus struct {
		id           int
		sha, ref     string
		name, status string
		description  string
		targetURL    string
		allowFailure bool
		created      time.Time
		author       string
	}
)

// draftTitle is GitLab's rule for a draft: a title prefix.
var draftTitle = regexp.MustCompile(`(?i)^\s*(\[draft\]|\(draft\)|draft:)`)

func (m *mergeRequest) draft() bool { return draftTitle.MatchString(m.title) }

// detailedMergeStatus is what detailed_merge_status says.
func (m *mergeRequest) detailedMergeStatus() string {
	switch {
	case m.state != "opened":
		return "not_open"
	case m.draft():
		return "draft_status"
	case !m.checked:
		return "checking"
	}
	return "mergeable"
}

// stamp is a time as GitLab writes one: 2026-03-02T09:00:01.000Z.
type stamp time.Time

func (t stamp) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, "%q", time.Time(t).UTC().Format("2006-01-02T15:04:05.000Z")), nil
}

func stampOf(t *time.Time) *stamp {
	if t == nil {
		return nil
	}
	s := stamp(*t)
	return &s
}

func nullable[T comparable](v T) *T {
	var zero T
	if v == zero {
		return nil
	}
	return &v
}

// The JSON GitLab answers with, field names as documented.
type (
	userJSON struct {
		ID        int     `json:"id"`
		Username  string  `json:"username"`
		Name      string  `json:"name"`
		State     string  `json:"state"`
		Locked    bool    `json:"locked"`
		AvatarURL *string `json:"avatar_url"`
		WebURL    string  `json:"web_url"`
	}

	referencesJSON struct {
		Short    string `json:"short"`
		Relative string `json:"relative"`
		Full     string `json:"full"`
	}

	// mergeRequestJSON is a merge request in a list.
	mergeRequestJSON struct {
		ID                          int            `json:"id"`
		IID                         int            `json:"iid"`
		ProjectID                   int            `json:"project_id"`
		Title                       string         `json:"title"`
		Description                 string         `json:"description"`
		State                       string         `json:"state"`
		CreatedAt                   stamp          `json:"created_at"`
		UpdatedAt                   stamp          `json:"updated_at"`
		MergedBy                    *userJSON      `json:"merged_by"`
		MergeUser                   *userJSON      `json:"merge_user"`
		MergedAt                    *stamp         `json:"merged_at"`
		ClosedBy                    *userJSON      `json:"closed_by"`
		ClosedAt                    *stamp         `json:"closed_at"`
		TargetBranch                string         `json:"target_branch"`
		SourceBranch                string         `json:"source_branch"`
		UserNotesCount              int            `json:"user_notes_count"`
		Upvotes                     int            `json:"upvotes"`
		Downvotes                   int            `json:"downvotes"`
		Author                      userJSON       `json:"author"`
		Assignees                   []userJSON     `json:"assignees"`
		Assignee                    *userJSON      `json:"assignee"`
		Reviewers                   []userJSON     `json:"reviewers"`
		SourceProjectID             int            `json:"source_project_id"`
		TargetProjectID             int            `json:"target_project_id"`
		Labels                      []string       `json:"labels"`
		Draft                       bool           `json:"draft"`
		WorkInProgress              bool           `json:"work_in_progress"`
		Milestone                   *struct{}      `json:"milestone"`
		MergeWhenPipelineSucceeds   bool           `json:"merge_when_pipeline_succeeds"`
		MergeStatus                 string         `json:"merge_status"`
		DetailedMergeStatus         string         `json:"detailed_merge_status"`
		SHA                         string         `json:"sha"`
		MergeCommitSHA              *string        `json:"merge_commit_sha"`
		SquashCommitSHA             *string        `json:"squash_commit_sha"`
		DiscussionLocked            *bool          `json:"discussion_locked"`
		ShouldRemoveSourceBranch    *bool          `json:"should_remove_source_branch"`
		ForceRemoveSourceBranch     bool           `json:"force_remove_source_branch"`
		Reference                   string         `json:"reference"`
		References                  referencesJSON `json:"references"`
		WebURL                      string         `json:"web_url"`
		Squash                      bool           `json:"squash"`
		SquashOnMerge               bool           `json:"squash_on_merge"`
		HasConflicts                bool           `json:"has_conflicts"`
		BlockingDiscussionsResolved bool           `json:"blocking_discussions_resolved"`
	}

	// mergeRequestDetailJSON is a merge request read, created or updated
	// on its own: the list's fields and a few more.
	mergeRequestDetailJSON struct {
		mergeRequestJSON
		Subscribed   bool      `json:"subscribed"`
		ChangesCount string    `json:"changes_count"`
		MergeError   *string   `json:"merge_error"`
		HeadPipeline *struct{} `json:"head_pipeline"`
		DiffRefs     struct {
			BaseSHA  string `json:"base_sha"`
			HeadSHA  string `json:"head_sha"`
			StartSHA string `json:"start_sha"`
		} `json:"diff_refs"`
		User struct {
			CanMerge bool `json:"can_merge"`
		} `json:"user"`
		FirstContribution bool `json:"first_contribution"`
	}

	positionJSON struct {
		BaseSHA      string    `json:"base_sha"`
		StartSHA     string    `json:"start_sha"`
		HeadSHA      string    `json:"head_sha"`
		OldPath      string    `json:"old_path"`
		NewPath      string    `json:"new_path"`
		PositionType string    `json:"position_type"`
		OldLine      *int      `json:"old_line"`
		NewLine      *int      `json:"new_line"`
		LineRange    *struct{} `json:"line_range"`
	}

	noteJSON struct {
		ID           int           `json:"id"`
		Type         *string       `json:"type"`
		Body         string        `json:"body"`
		Attachment   *string       `json:"attachment"`
		Author       userJSON      `json:"author"`
		CreatedAt    stamp         `json:"created_at"`
		UpdatedAt    stamp         `json:"updated_at"`
		System       bool          `json:"system"`
		NoteableID   int           `json:"noteable_id"`
		NoteableType string        `json:"noteable_type"`
		ProjectID    int           `json:"project_id"`
		CommitID     *string       `json:"commit_id"`
		Position     *positionJSON `json:"position,omitempty"`
		Resolvable   bool          `json:"resolvable"`
		Resolved     bool          `json:"resolved"`
		ResolvedBy   *userJSON     `json:"resolved_by"`
		ResolvedAt   *stamp        `json:"resolved_at"`
		Confidential bool          `json:"confidential"`
		Internal     bool          `json:"internal"`
		Imported     bool          `json:"imported"`
		ImportedFrom string        `json:"imported_from"`
		NoteableIID  int           `json:"noteable_iid"`
	}

	commitStatusJSON struct {
		ID           int      `json:"id"`
		SHA          string   `json:"sha"`
		Ref          string   `json:"ref"`
		Status       string   `json:"status"`
		Name         string   `json:"name"`
		TargetURL    *string  `json:"target_url"`
		Description  *string  `json:"description"`
		CreatedAt    stamp    `json:"created_at"`
		StartedAt    *stamp   `json:"started_at"`
		FinishedAt   *stamp   `json:"finished_at"`
		AllowFailure bool     `json:"allow_failure"`
		Coverage     *float64 `json:"coverage"`
		PipelineID   *int     `json:"pipeline_id"`
		Author       userJSON `json:"author"`
	}

	// memberJSON is a member of a project or group: the user's basic
	// fields, their role, and GitLab EE's membership_state.
	memberJSON struct {
		userJSON
		AccessLevel       int       `json:"access_level"`
		CreatedAt         stamp     `json:"created_at"`
		CreatedBy         *userJSON `json:"created_by,omitempty"`
		ExpiresAt         *string   `json:"expires_at"`
		GroupSAMLIdentity *struct{} `json:"group_saml_identity"`
		MembershipState   string    `json:"membership_state"`
	}

	// groupJSON is a group read on its own. projects and shared_projects
	// are there unless with_projects=false.
	groupJSON struct {
		ID                             int         `json:"id"`
		WebURL                         string      `json:"web_url"`
		Name                           string      `json:"name"`
		Path                           string      `json:"path"`
		Description                    string      `json:"description"`
		Visibility                     string      `json:"visibility"`
		ShareWithGroupLock             bool        `json:"share_with_group_lock"`
		RequireTwoFactorAuthentication bool        `json:"require_two_factor_authentication"`
		TwoFactorGracePeriod           int         `json:"two_factor_grace_period"`
		ProjectCreationLevel           string      `json:"project_creation_level"`
		AutoDevopsEnabled              *bool       `json:"auto_devops_enabled"`
		SubgroupCreationLevel          string      `json:"subgroup_creation_level"`
		EmailsDisabled                 bool        `json:"emails_disabled"`
		EmailsEnabled                  bool        `json:"emails_enabled"`
		MentionsDisabled               *bool       `json:"mentions_disabled"`
		LFSEnabled                     bool        `json:"lfs_enabled"`
		DefaultBranch                  *string     `json:"default_branch"`
		DefaultBranchProtection        int         `json:"default_branch_protection"`
		AvatarURL                      *string     `json:"avatar_url"`
		RequestAccessEnabled           bool        `json:"request_access_enabled"`
		FullName                       string      `json:"full_name"`
		FullPath                       string      `json:"full_path"`
		CreatedAt                      stamp       `json:"created_at"`
		ParentID                       *int        `json:"parent_id"`
		SharedWithGroups               []struct{}  `json:"shared_with_groups"`
		Projects                       *[]struct{} `json:"projects,omitempty"`
		SharedProjects                 *[]struct{} `json:"shared_projects,omitempty"`
	}

	labelJSON struct {
		ID                     int     `json:"id"`
		Name                   string  `json:"name"`
		Color                  string  `json:"color"`
		TextColor              string  `json:"text_color"`
		Description            *string `json:"description"`
		DescriptionHTML        string  `json:"description_html"`
		OpenIssuesCount        int     `json:"open_issues_count"`
		ClosedIssuesCount      int     `json:"closed_issues_count"`
		OpenMergeRequestsCount int     `json:"open_merge_requests_count"`
		Subscribed             bool    `json:"subscribed"`
		Priority               *int    `json:"priority"`
		IsProjectLabel         bool    `json:"is_project_label"`
	}
)

// The shapes of the fake's records; the caller holds s.mu.

func (s *Server) userJSON(username string) userJSON {
	id, state := 0, "active"
	if u := s.userNamed(username); u != nil {
		id, state = u.id, u.state
	}
	return userJSON{ID: id, Username: username, Name: username, State: state, WebURL: s.URL + "/" + username}
}

func (s *Server) memberJSON(username string, m membership) memberJSON {
	return memberJSON{
		userJSON: s.userJSON(username), AccessLevel: m.level, CreatedAt: stamp(m.since),
		MembershipState: "active",
	}
}

func (s *Server) groupJSON(g *group, withProjects bool) groupJSON {
	segments := strings.Split(g.path, "/")
	out := groupJSON{
		ID: g.id, WebURL: s.URL + "/groups/" + g.path,
		Name: segments[len(segments)-1], Path: segments[len(segments)-1],
		Visibility: "public", ProjectCreationLevel: "developer", SubgroupCreationLevel: "maintainer",
		EmailsEnabled: true, LFSEnabled: true, DefaultBranchProtection: 2, RequestAccessEnabled: true,
		FullName: strings.Join(segments, " / "), FullPath: g.path, CreatedAt: stamp(g.created),
		ParentID: nullable(g.parentID), SharedWithGroups: []struct{}{},
	}
	if withProjects {
		// The fake's groups hold no projects: the project's path is only a
		// path.
		out.Projects, out.SharedProjects = &[]struct{}{}, &[]struct{}{}
	}
	return out
}

func (s *Server) userRef(username string) *userJSON {
	if username == "" {
		return nil
	}
	u := s.userJSON(username)
	return &u
}

func (s *Server) mergeRequestJSON(m *mergeRequest) mergeRequestJSON {
	merge := "can_be_merged"
	detailed := m.detailedMergeStatus()
	switch detailed {
	case "checking":
		merge = "checking"
	case "not_open":
		merge = "cannot_be_merged"
	}
	reviewers := []userJSON{}
	for _, r := range m.reviewers {
		reviewers = append(reviewers, s.userJSON(r))
	}
	userNotes := 0
	for _, n := range s.notes {
		if n.iid == m.iid && !n.onIssue && !n.system {
			userNotes++
		}
	}
	ref := fmt.Sprintf("!%d", m.iid)
	return mergeRequestJSON{
		ID: m.id, IID: m.iid, ProjectID: s.projectID,
		Title: m.title, Description: m.body, State: m.state,
		CreatedAt: stamp(m.created), UpdatedAt: stamp(m.updated),
		MergedBy: s.userRef(m.mergedBy), MergeUser: s.userRef(m.mergedBy), MergedAt: stampOf(m.mergedAt),
		ClosedBy: s.userRef(m.closedBy), ClosedAt: stampOf(m.closedAt),
		TargetBranch: m.target, SourceBranch: m.source,
		UserNotesCount: userNotes,
		Author:         s.userJSON(m.author), Assignees: []userJSON{}, Reviewers: reviewers,
		SourceProjectID: s.projectID, TargetProjectID: s.projectID,
		Labels: append([]string{}, m.labels...),
		Draft:  m.draft(), WorkInProgress: m.draft(),
		MergeStatus: merge, DetailedMergeStatus: detailed,
		SHA:                         m.sha,
		MergeCommitSHA:              nullable(m.mergeCommit),
		Reference:                   ref,
		References:                  referencesJSON{Short: ref, Relative: ref, Full: s.opt.Project + ref},
		WebURL:                      fmt.Sprintf("%s/%s/-/merge_requests/%d", s.URL, s.opt.Project, m.iid),
		BlockingDiscussionsResolved: true,
	}
}

func (s *Server) mergeRequestDetailJSON(m *mergeRequest) mergeRequestDetailJSON {
	d := mergeRequestDetailJSON{mergeRequestJSON: s.mergeRequestJSON(m), ChangesCount: "1"}
	base := s.head(m.target)
	d.DiffRefs.BaseSHA, d.DiffRefs.HeadSHA, d.DiffRefs.StartSHA = base, m.sha, base
	d.User.CanMerge = true
	return d
}

func (s *Server) noteJSON(n *note) noteJSON {
	out := noteJSON{
		ID: n.id, Body: n.body, Author: s.userJSON(n.author),
		CreatedAt: stamp(n.created), UpdatedAt: stamp(n.updated),
		System: n.system, ProjectID: s.projectID, ImportedFrom: "none", NoteableIID: n.iid,
		Type: nullable(n.kind),
	}
	if n.onIssue {
		out.NoteableID, out.NoteableType = s.issues[n.iid-1].id, "Issue"
	} else {
		out.NoteableID, out.NoteableType = s.mrs[n.iid-1].id, "MergeRequest"
	}
	if p := n.position; p != nil {
		out.Resolvable = true
		out.Position = &positionJSON{
			BaseSHA: p.baseSHA, StartSHA: p.baseSHA, HeadSHA: p.headSHA,
			OldPath: p.path, NewPath: p.path, PositionType: "text",
			OldLine: nullable(p.oldLine), NewLine: nullable(p.newLine),
		}
	}
	return out
}

func (s *Server) commitStatusJSON(c *commitStatus) commitStatusJSON {
	return commitStatusJSON{
		ID: c.id, SHA: c.sha, Ref: c.ref, Status: c.status, Name: c.name,
		TargetURL: nullable(c.targetURL), Description: nullable(c.description),
		CreatedAt: stamp(c.created), AllowFailure: c.allowFailure,
		Author: s.userJSON(c.author),
	}
}
