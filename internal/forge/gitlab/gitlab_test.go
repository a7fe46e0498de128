package gitlab_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/forge/forgetest"
	"github.com/azolla/azolla/internal/forge/gitlab"
	"github.com/azolla/azolla/internal/forge/gitlab/gitlabfake"
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
	}
}

// statusAs posts a commit status through GitLab's REST API with user's
// token, and returns GitLab's answer.
func statusAs(t *testing.T, fake *gitlabfake.Server, user, sha, name, status, description string) error {
	t.Helper()
	api, err := gl.NewClient(fake.Token(user), gl.WithBaseURL(fake.URL), gl.WithoutRetries())
	require.NoError(t, err)
	_, _, err = api.Commits.SetCommitStatus(fake.Options().Project, sha, &gl.SetCommitStatusOptions{
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

func TestNew_RefusesMissingProjectOrToken(t *testing.T) {
	t.Parallel()
	_, err := gitlab.New(gitlab.Options{Token: "t"})
	require.ErrorContains(t, err, "project")
	_, err = gitlab.New(gitlab.Options{Project: "g/p"})
	require.ErrorContains(t, err, "token")
}
