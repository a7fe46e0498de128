package gitlab_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/forge/forgetest"
	"github.com/azolla/azolla/internal/forge/gitlab"
	"github.com/azolla/azolla/internal/forge/gitlab/gitlabfake"
	"github.com/azolla/azolla/workers/intake/intaketest"
)

// testBundle is a fake GitLab and the forge that reaches it.
type testBundle struct {
	fake  *gitlabfake.Server
	forge forge.Forge
	sleep *forgetest.Sleeper
}

// setup starts a fake shaped by fo and a forge on it with pages of two,
// a recording Sleep and the fake's clock; edit changes its options.
func setup(t *testing.T, fo gitlabfake.Options, edit ...func(*gitlab.Options)) *testBundle {
	t.Helper()
	fake := gitlabfake.New(t, fo)
	sl := &forgetest.Sleeper{}
	o := gitlab.Options{
		BaseURL:  fake.URL,
		Project:  fake.Options().Project,
		Token:    fake.Options().Token,
		PageSize: 2,
		Sleep:    sl.Sleep,
		Now:      fake.Now,
	}
	for _, e := range edit {
		e(&o)
	}
	f, err := gitlab.New(o)
	require.NoError(t, err)
	return &testBundle{fake: fake, forge: f, sleep: sl}
}

// A condition the fake reaches after a read or two.
const (
	eventually = 5 * time.Second
	tick       = 10 * time.Millisecond
)

// statusWord is the commit status GitLab shows for a check state.
var statusWord = map[forge.CheckState]string{
	forge.ChecksSuccess: "success",
	forge.ChecksPending: "running",
	forge.ChecksFailure: "failed",
	forge.ChecksNone:    "created",
}

func harness(t *testing.T, b *testBundle) *forgetest.Harness {
	fake := b.fake
	return &forgetest.Harness{
		Forge: b.forge,
		Base:  fake.Options().Base,
		Push:  func(_ *testing.T, branch string) string { return fake.Push(branch) },
		Open: func(t *testing.T, head, title string) int {
			n, err := fake.Open(head, title, gitlabfake.Maintainer)
			require.NoError(t, err)
			return n
		},
		Review: func(t *testing.T, number int, state forge.ReviewState, body string, comments []forge.ReviewComment) {
			require.NoError(t, fake.Review(number, gitlabfake.Reviewer, state, body, comments))
		},
		Status: func(t *testing.T, sha, name string, state forge.CheckState, description string) {
			require.NoError(t, fake.Status(sha, name, statusWord[state], description, false))
		},
		Merge: func(t *testing.T, number int) { require.NoError(t, fake.Merge(number, gitlabfake.Maintainer)) },
		Close: func(t *testing.T, number int) { require.NoError(t, fake.Close(number, gitlabfake.Maintainer)) },
		Files: fake.Options().Files,

		Self:     fake.Options().Username,
		Writer:   gitlabfake.Reviewer,
		Reader:   gitlabfake.Reader,
		Stranger: gitlabfake.Stranger,
		Team:     gitlabfake.Team,
		ReviewAs: func(t *testing.T, user string, number int, state forge.ReviewState, body string) {
			require.NoError(t, fake.Review(number, user, state, body, nil))
		},
		StatusAs: func(t *testing.T, user, sha, name string, state forge.CheckState, description string) error {
			return statusAs(t, fake, user, sha, name, statusWord[state], description)
		},
		OpenIssue: func(t *testing.T, user, title, body string, labels, assignees []string) int {
			return openIssue(t, fake, user, title, body, labels, assignees)
		},
		LabelIssue: func(t *testing.T, user string, number int, label string) {
			add := gl.LabelOptions{label}
			_, _, err := apiAs(t, fake, user).Issues.UpdateIssue(fake.Options().Project, int64(number),
				&gl.UpdateIssueOptions{AddLabels: &add})
			require.NoError(t, err, "label issue #%d %q as %s", number, label, user)
		},
		UnlabelIssue: func(t *testing.T, user string, number int, label string) {
			remove := gl.LabelOptions{label}
			_, _, err := apiAs(t, fake, user).Issues.UpdateIssue(fake.Options().Project, int64(number),
				&gl.UpdateIssueOptions{RemoveLabels: &remove})
			require.NoError(t, err, "unlabel issue #%d %q as %s", number, label, user)
		},
		CloseIssue: func(t *testing.T, number int) {
			closeEvent := "close"
			_, _, err := apiAs(t, fake, gitlabfake.Maintainer).Issues.UpdateIssue(fake.Options().Project, int64(number),
				&gl.UpdateIssueOptions{StateEvent: &closeEvent})
			require.NoError(t, err)
		},
		CommentAs: func(t *testing.T, user string, on forge.Thread, body string) string {
			return commentAs(t, fake, user, on, body)
		},
	}
}

// apiAs is a client of GitLab's REST API with user's token.
func apiAs(t *testing.T, fake *gitlabfake.Server, user string) *gl.Client {
	t.Helper()
	api, err := gl.NewClient(fake.Token(user), gl.WithBaseURL(fake.URL), gl.WithoutRetries())
	require.NoError(t, err)
	return api
}

// openIssue has author open an issue, then the maintainer label and
// assign it: GitLab drops labels and assignees asked for by anyone below
// the Planner role.
func openIssue(t *testing.T, fake *gitlabfake.Server, author, title, body string, labels, assignees []string) int {
	t.Helper()
	project := fake.Options().Project
	is, _, err := apiAs(t, fake, author).Issues.CreateIssue(project, &gl.CreateIssueOptions{Title: &title, Description: &body})
	require.NoError(t, err)
	if len(labels) == 0 && len(assignees) == 0 {
		return int(is.IID)
	}
	maintainer := apiAs(t, fake, gitlabfake.Maintainer)
	opt := &gl.UpdateIssueOptions{}
	if len(labels) > 0 {
		add := gl.LabelOptions(labels)
		opt.AddLabels = &add
	}
	if len(assignees) > 0 {
		ids := []int64{}
		for _, name := range assignees {
			users, _, err := maintainer.Users.ListUsers(&gl.ListUsersOptions{Username: &name})
			require.NoError(t, err)
			require.Len(t, users, 1, "user %q", name)
			ids = append(ids, users[0].ID)
		}
		opt.AssigneeIDs = &ids
	}
	_, _, err = maintainer.Issues.UpdateIssue(project, is.IID, opt)
	require.NoError(t, err)
	return int(is.IID)
}

// commentAs adds a note to an issue or merge request as user and returns
// its id.
func commentAs(t *testing.T, fake *gitlabfake.Server, user string, on forge.Thread, body string) string {
	t.Helper()
	api, project := apiAs(t, fake, user), fake.Options().Project
	var n *gl.Note
	var err error
	if on.Pull {
		n, _, err = api.Notes.CreateMergeRequestNote(project, int64(on.Number), &gl.CreateMergeRequestNoteOptions{Body: &body})
	} else {
		n, _, err = api.Notes.CreateIssueNote(project, int64(on.Number), &gl.CreateIssueNoteOptions{Body: &body})
	}
	require.NoError(t, err, "comment on %s as %s", on, user)
	return strconv.FormatInt(n.ID, 10)
}

// statusAs posts a commit status through GitLab's REST API with user's
// token, and returns GitLab's answer.
func statusAs(t *testing.T, fake *gitlabfake.Server, user, sha, name, status, description string) error {
	t.Helper()
	_, _, err := apiAs(t, fake, user).Commits.SetCommitStatus(fake.Options().Project, sha, &gl.SetCommitStatusOptions{
		State: gl.BuildStateValue(status), Name: &name, Description: &description,
	})
	return err
}

// The suite runs on a project in a subgroup, so that every request it
// makes goes through the URL-encoded path.
func TestConformance(t *testing.T) {
	forgetest.Exercise(t, func(t *testing.T) *forgetest.Harness {
		return harness(t, setup(t, gitlabfake.Options{Project: "azolla-org/platform/widgets"}))
	})
}

// The forge intake's suite, through the same harness.
func TestConformance_Intake(t *testing.T) {
	intaketest.Exercise(t, func(t *testing.T) *forgetest.Harness {
		return harness(t, setup(t, gitlabfake.Options{Project: "azolla-org/platform/widgets"}))
	})
}

func TestNew_RefusesMissingProjectOrToken(t *testing.T) {
	t.Parallel()
	_, err := gitlab.New(gitlab.Options{Token: "t"})
	require.ErrorContains(t, err, "project")
	_, err = gitlab.New(gitlab.Options{Project: "g/p"})
	require.ErrorContains(t, err, "token")
}
