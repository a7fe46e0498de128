package github_test

// The JSON shapes the fake answers pull requests, users, repositories and
// labels in, field names as GitHub's: "pull request simple" for lists, the
// full "pull request" for the rest.

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
	for _, login := range p.reviewers {
		j.RequestedReviewers = append(j.RequestedReviewers, f.user(login))
	}
	return j
}

// full is the complete shape. mergeable is null the first time it is
// asked after a change, as GitHub computes it in the background.
func (f *fakeGitHub) full(p *fakePull, computeMergeable bool) jsonPull {
	j := jsonPull{jsonPullSimple: f.simple(p), Merged: p.merged, MergeableState: "unknown",
		Comments: len(f.issueComments[p.number]), MaintainerCanModify: false, Commits: 1}
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
