package gitops_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/gitops"
)

func TestValidateRepository_AcceptsLocationsRefusesOptionsAndHelpers(t *testing.T) {
	t.Parallel()
	accepted := []string{
		"/srv/git/repo.git",
		"/home/me/my repo",
		"https://github.com/org/repo.git",
		"HTTPS://example.com/repo",
		"http://example.com:8080/repo",
		"https://user:token@example.com/repo.git",
		"ssh://git@example.com:2222/org/repo.git",
		"ssh://[::1]/repo",
		"git://example.com/repo",
		"file:///srv/git/repo.git",
		"git@github.com:org/repo.git",
		"deploy_bot@10.0.0.1:repos/x",
	}
	for _, repo := range accepted {
		require.NoError(t, gitops.ValidateRepository(repo), repo)
	}
	refused := map[string]string{
		"":                                 "empty",
		"-x":                               "starts with '-'",
		"--upload-pack=touch /tmp/pwned":   "starts with '-'",
		"relative/path":                    "not an absolute path",
		"./repo":                           "not an absolute path",
		"../repo":                          "not an absolute path",
		"repo.git":                         "not an absolute path",
		"ext::sh -c touch% /tmp/pwned":     "remote helpers",
		"fd::17":                           "remote helpers",
		"myhelper::https://example.com/r":  "remote helpers",
		"https://example.com/r\nx":         "control character",
		"/srv/r\x00":                       "control character",
		"/srv/r\ttab":                      "control character",
		"ftp://example.com/r":              "scheme ftp",
		"rsync://example.com/r":            "scheme rsync",
		"ssh://-oProxyCommand=x/r":         "host starts with '-'",
		"ssh://-oProxyCommand=touch%20x/r": "not a URL",
		"ssh://-u@example.com/r":           "user starts with '-'",
		"https:///nohost":                  "no host",
		"file://otherhost/srv/r":           "may not name a host",
		"file://relative":                  "may not name a host",
		"host:path":                        "not an absolute path",
		"-u@host:x":                        "starts with '-'",
		"git@-host:x":                      "starts with '-'",
		"git@host:-x":                      "starts with '-'",
		"git@host:":                        "path is empty",
		"git@ho st:x":                      "scp-like host",
		"/":                                "file system root",
	}
	for repo, why := range refused {
		err := gitops.ValidateRepository(repo)
		require.ErrorIs(t, err, gitops.ErrInvalidRepository, "%q", repo)
		require.ErrorContains(t, err, why, "%q", repo)
	}
}

func TestValidateBranch_AcceptedNamesAreAcceptedByGit(t *testing.T) {
	t.Parallel()
	accepted := []string{
		"main", "azolla/obj-1", "azolla/0190f1a2-7c3b-7d4e-9f00-1234567890ab",
		"feature/x_y.z-1", "a/b/c/d", "v1.2.3", "release-2026.07", "x.lockfile", "a-", "a_",
		strings.Repeat("a", 200),
	}
	for _, name := range accepted {
		require.NoError(t, gitops.ValidateBranch(name), name)
		out, err := exec.Command("git", "check-ref-format", "--branch", name).CombinedOutput()
		require.NoError(t, err, "git refuses %q: %s", name, out)
	}
}

func TestValidateBranch_RefusesUnsafeNames(t *testing.T) {
	t.Parallel()
	refused := []string{
		"", "-x", "--upload-pack=x", "a..b", "x.lock", "a/x.lock", "a b", "../x", "a//b", "/a", "a/",
		".x", "a/.b", "a.", "a@{1}", "@", "HEAD", "a~1", "a^b", "a:b", "a?b", "a*b", "a[b", `a\b`,
		"a\x00b", "a\nb", "a\tb", "é", strings.Repeat("a", 201),
	}
	for _, name := range refused {
		require.ErrorIs(t, gitops.ValidateBranch(name), gitops.ErrInvalidBranch, "%q", name)
	}
}
