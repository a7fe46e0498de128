package github_test

// The JSON shapes the fake answers pull requests, users, repositories and
// labels in, field names as GitHub's: "pull request simple" for lists, the
// full "pull request" for the rest; issues (a pull request's issue side
// too) and issue comments.

import (
	"fmt"
	"strconv"
	"strings"
)

type jsonUser struct {
	Login     string `json:"login"`
	ID        int64  `json:"id"`
	NodeID    string `json:"node_id"`
	HTMLURL   string `json:"html_url"`
	Type      string `json:"type"`
	SiteAdmin bool   `json:"site_admin"`
}

type jsonRepo struct {
	ID       int64    `json:"id"`
	Name     string   `json:"name"`
	FullName string   `json:"full_name"`
	Private  bool     `json:"private"`
	HTMLURL  string   `json:"html_url"`
	Owner    jsonUser `json:"owner"`
}

type jsonBranch struct {
	Label string   `json:"label"`
	Ref   string   `json:"ref"`
	SHA   string   `json:"sha"`
	User  jsonUser `json:"user"`
	Repo  jsonRepo `json:"repo"`
}

type jsonLabel struct {
	ID          int64   `json:"id"`
	NodeID      string  `json:"node_id"`
	URL         string  `json:"url"`
	Name        string  `json:"name"`
	Color       string  `json:"color"`
	Default     bool    `json:"default"`
	Description *string `json:"description"`
}

// jsonPullSimple is a pull request as the list answers it.
type jsonPullSimple struct {
	URL                string      `json:"url"`
	ID                 int64       `json:"id"`
	NodeID             string      `json:"node_id"`
	HTMLURL            string      `json:"html_url"`
	DiffURL            string      `json:"diff_url"`
	IssueURL           string      `json:"issue_url"`
	Number             int         `json:"number"`
	State              string      `json:"state"`
	Locked             bool        `json:"locked"`
	Title              string      `json:"title"`
	User               jsonUser    `json:"user"`
	Body               *string     `json:"body"`
	Labels             []jsonLabel `json:"labels"`
	CreatedAt          *string     `json:"created_at"`
	UpdatedAt          *string     `json:"updated_at"`
	ClosedAt           *string     `json:"closed_at"`
	MergedAt           *string     `json:"merged_at"`
	MergeCommitSHA     *string     `json:"merge_commit_sha"`
	Assignees          []jsonUser  `json:"assignees"`
	RequestedReviewers []jsonUser  `json:"requested_reviewers"`
	RequestedTeams     []any       `json:"requested_teams"`
	Head               jsonBranch  `json:"head"`
	Base               jsonBranch  `json:"base"`
	AuthorAssociation  string      `json:"author_association"`
	AutoMerge          any         `json:"auto_merge"`
	Draft              bool        `json:"draft"`
}

// jsonPull is a pull request as get, create and update answer it.
type jsonPull struct {
	jsonPullSimple
	Merged              bool      `json:"merged"`
	Mergeable           *bool     `json:"mergeable"`
	Rebaseable          *bool     `json:"rebaseable"`
	MergeableState      string    `json:"mergeable_state"`
	MergedBy            *jsonUser `json:"merged_by"`
	Comments            int       `json:"comments"`
	ReviewComments      int       `json:"review_comments"`
	MaintainerCanModify bool      `json:"maintainer_can_modify"`
	Commits             int       `json:"commits"`
	ChangedFiles        int       `json:"changed_files"`
}

// user is login's "simple user", spelled as the account spells it (logins
// are not case sensitive).
func (f *fakeGitHub) user(login string) jsonUser {
	for _, known := range f.users {
		if strings.EqualFold(known.login, login) {
			login = known.login
		}
	}
	u := jsonUser{Login: login, NodeID: "U_" + login, HTMLURL: "https://github.example/" + login, Type: "User"}
	for _, known := range f.users {
		if known.login == login {
			u.ID = known.id
		}
	}
	return u
}

func (f *fakeGitHub) repoJSON() jsonRepo {
	return jsonRepo{ID: 42, Name: fakeRepo, FullName: fakeOwner + "/" + fakeRepo, Private: false,
		HTMLURL: "https://github.example/" + fakeOwner + "/" + fakeRepo,
		Owner:   jsonUser{Login: fakeOwner, ID: 7, Type: "Organization"}}
}

func (f *fakeGitHub) apiURL(path string) string {
	return f.srv.URL + f.prefix + "/repos/" + fakeOwner + "/" + fakeRepo + path
}

func (f *fakeGitHub) labelJSON(l *fakeLabel) jsonLabel {
	j := jsonLabel{ID: l.id, NodeID: "LA_" + strconv.FormatInt(l.id, 10), URL: f.apiURL("/labels/" + l.name),
		Name: l.name, Color: l.color}
	if l.descr != "" {
		j.Description = &l.descr
	}
	return j
}

func (f *fakeGitHub) simple(p *fakePull) jsonPullSimple {
	branch := func(ref, sha string) jsonBranch {
		return jsonBranch{Label: fakeOwner + ":" + ref, Ref: ref, SHA: sha,
			User: jsonUser{Login: fakeOwner, ID: 7, Type: "Organization"}, Repo: f.repoJSON()}
	}
	j := jsonPullSimple{
		URL:      f.apiURL("/pulls/" + strconv.Itoa(p.number)),
		ID:       p.id,
		NodeID:   "PR_" + strconv.FormatInt(p.id, 10),
		HTMLURL:  fmt.Sprintf("https://github.example/%s/%s/pull/%d", fakeOwner, fakeRepo, p.number),
		DiffURL:  fmt.Sprintf("https://github.example/%s/%s/pull/%d.diff", fakeOwner, fakeRepo, p.number),
		IssueURL: f.apiURL("/issues/" + strconv.Itoa(p.number)),
		Number:   p.number, State: p.state, Title: p.title, User: f.user(p.author),
		Labels: []jsonLabel{}, Assignees: []jsonUser{}, RequestedReviewers: []jsonUser{}, RequestedTeams: []any{},
		CreatedAt: stamp(p.created), UpdatedAt: stamp(p.updated), ClosedAt: stamp(p.closed), MergedAt: stamp(p.mergedAt),
		Head: branch(p.head, p.headSHA), Base: branch(p.base, f.branches[p.base].sha),
		AuthorAssociation: f.association(p.author), Draft: p.draft,
	}
	if p.body != "" {
		j.Body = &p.body
	}
	if p.mergeSHA != "" {
		j.MergeCommitSHA = &p.mergeSHA
	}
	for _, name := range p.labels {
		j.Labels = append(j.Labels, f.labelJSON(f.labels[strings.ToLower(name)]))
	}
	for _, login := range p.assignees {
		j.Assignees = append(j.Assignees, f.user(login))
	}
	for _, login := range p.reviewers {
		j.RequestedReviewers = append(j.RequestedReviewers, f.user(login))
	}
	return j
}

// full is the complete shape. mergeable is null the first time it is
// asked after a change, as GitHub computes it in the background.
func (f *fakeGitHub) full(p *fakePull, computeMergeable bool) jsonPull {
	j := jsonPull{jsonPullSimple: f.simple(p), Merged: p.merged, MergeableState: "unknown",
		Comments: f.commentCount(p.number), MaintainerCanModify: false, Commits: 1}
	if b := f.branches[p.head]; b != nil {
		j.ChangedFiles = len(b.files)
	}
	for _, c := range f.comments {
		if c.pull == p.number {
			j.ReviewComments++
		}
	}
	if p.merged {
		by := f.user(p.mergedBy)
		j.MergedBy = &by
	}
	if p.state == "open" && p.mergeableKnown {
		yes := true
		j.Mergeable, j.Rebaseable, j.MergeableState = &yes, &yes, "clean"
	}
	if computeMergeable {
		p.mergeableKnown = true
	}
	return j
}

// jsonIssue is an issue as GitHub answers it, a pull request's issue side
// included.
type jsonIssue struct {
	ID                int64          `json:"id"`
	NodeID            string         `json:"node_id"`
	URL               string         `json:"url"`
	RepositoryURL     string         `json:"repository_url"`
	LabelsURL         string         `json:"labels_url"`
	CommentsURL       string         `json:"comments_url"`
	EventsURL         string         `json:"events_url"`
	HTMLURL           string         `json:"html_url"`
	Number            int            `json:"number"`
	State             string         `json:"state"`
	StateReason       *string        `json:"state_reason"`
	Title             string         `json:"title"`
	Body              *string        `json:"body"`
	User              jsonUser       `json:"user"`
	Labels            []jsonLabel    `json:"labels"`
	Assignee          *jsonUser      `json:"assignee"`
	Assignees         []jsonUser     `json:"assignees"`
	Milestone         any            `json:"milestone"`
	Locked            bool           `json:"locked"`
	ActiveLockReason  *string        `json:"active_lock_reason"`
	Comments          int            `json:"comments"`
	PullRequest       *jsonPullLinks `json:"pull_request,omitempty"`
	ClosedAt          *string        `json:"closed_at"`
	CreatedAt         *string        `json:"created_at"`
	UpdatedAt         *string        `json:"updated_at"`
	ClosedBy          *jsonUser      `json:"closed_by,omitempty"`
	AuthorAssociation string         `json:"author_association"`
	Draft             *bool          `json:"draft,omitempty"`
}

type jsonPullLinks struct {
	URL      string  `json:"url"`
	HTMLURL  string  `json:"html_url"`
	DiffURL  string  `json:"diff_url"`
	PatchURL string  `json:"patch_url"`
	MergedAt *string `json:"merged_at"`
}

type jsonIssueComment struct {
	ID                int64    `json:"id"`
	NodeID            string   `json:"node_id"`
	URL               string   `json:"url"`
	HTMLURL           string   `json:"html_url"`
	IssueURL          string   `json:"issue_url"`
	Body              string   `json:"body"`
	User              jsonUser `json:"user"`
	CreatedAt         *string  `json:"created_at"`
	UpdatedAt         *string  `json:"updated_at"`
	AuthorAssociation string   `json:"author_association"`
}

func (f *fakeGitHub) issueJSON(th fakeThread) jsonIssue {
	n := th.number()
	path := "/issues/" + strconv.Itoa(n)
	j := jsonIssue{URL: f.apiURL(path), RepositoryURL: f.apiURL(""), LabelsURL: f.apiURL(path + "/labels{/name}"),
		CommentsURL: f.apiURL(path + "/comments"), EventsURL: f.apiURL(path + "/events"),
		Number: n, Labels: []jsonLabel{}, Assignees: []jsonUser{}, Comments: f.commentCount(n),
		User: f.user(th.author()), AuthorAssociation: f.association(th.author())}
	if p := th.pull; p != nil {
		web := fmt.Sprintf("https://github.example/%s/%s/pull/%d", fakeOwner, fakeRepo, n)
		j.ID, j.NodeID, j.HTMLURL, j.State, j.Title = p.id, "PR_"+strconv.FormatInt(p.id, 10), web, p.state, p.title
		j.CreatedAt, j.UpdatedAt, j.ClosedAt, j.Draft = stamp(p.created), stamp(p.updated), stamp(p.closed), &p.draft
		if p.body != "" {
			j.Body = &p.body
		}
		j.PullRequest = &jsonPullLinks{URL: f.apiURL("/pulls/" + strconv.Itoa(n)), HTMLURL: web,
			DiffURL: web + ".diff", PatchURL: web + ".patch", MergedAt: stamp(p.mergedAt)}
	} else {
		is := th.issue
		j.ID, j.NodeID, j.State, j.Title = is.id, "I_"+strconv.FormatInt(is.id, 10), is.state, is.title
		j.HTMLURL = fmt.Sprintf("https://github.example/%s/%s/issues/%d", fakeOwner, fakeRepo, n)
		j.CreatedAt, j.UpdatedAt, j.ClosedAt = stamp(is.created), stamp(is.updated), stamp(is.closed)
		if is.body != "" {
			j.Body = &is.body
		}
		if is.stateReason != "" {
			j.StateReason = &is.stateReason
		}
		if is.closedBy != "" {
			by := f.user(is.closedBy)
			j.ClosedBy = &by
		}
	}
	for _, name := range *th.labels() {
		j.Labels = append(j.Labels, f.labelJSON(f.labels[strings.ToLower(name)]))
	}
	for _, login := range *th.assignees() {
		j.Assignees = append(j.Assignees, f.user(login))
	}
	if len(j.Assignees) > 0 {
		j.Assignee = &j.Assignees[0]
	}
	return j
}

func (f *fakeGitHub) issueCommentJSON(c *fakeIssueComment) jsonIssueComment {
	kind := "issues"
	if f.pullNumbered(c.number) != nil {
		kind = "pull"
	}
	return jsonIssueComment{ID: c.id, NodeID: "IC_" + strconv.FormatInt(c.id, 10),
		URL: f.apiURL("/issues/comments/" + strconv.FormatInt(c.id, 10)),
		HTMLURL: fmt.Sprintf("https://github.example/%s/%s/%s/%d#issuecomment-%d", fakeOwner, fakeRepo, kind,
			c.number, c.id),
		IssueURL: f.apiURL("/issues/" + strconv.Itoa(c.number)), Body: c.body, User: f.user(c.author),
		CreatedAt: stamp(c.created), UpdatedAt: stamp(c.updated), AuthorAssociation: f.association(c.author)}
}
