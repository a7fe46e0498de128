package workers

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/forge/gitea"
	"github.com/azolla/azolla/internal/forge/github"
	"github.com/azolla/azolla/internal/forge/gitlab"
)

// NewForges gives the pull request step each repository's forge from
// patch.repositories[].forge; nil when no repository has one. The token
// is read when a forge is asked for, so a rotated one is picked up.
func NewForges(cfg config.Config, getenv func(string) string) activities.Forges {
	has := false
	for _, r := range cfg.Patch.Repositories {
		has = has || r.Forge.Enabled()
	}
	if !has {
		return nil
	}
	return func(repository string) (*activities.ForgeTarget, error) {
		f := cfg.Patch.Repository(repository).Forge
		if !f.Enabled() {
			return nil, nil
		}
		tok, err := f.Token(getenv)
		if err != nil {
			return nil, err
		}
		client, err := newForge(f, tok)
		if err != nil {
			return nil, fmt.Errorf("forge %s of %s: %w", f.Kind, repository, err)
		}
		return &activities.ForgeTarget{Forge: client, Kind: f.Kind, Repository: f.Repository, Draft: f.Draft,
			Labels: f.Labels, Reviewers: f.Reviewers, AutoRevise: f.AutoRevise, MaxRounds: f.Rounds(),
			PollInterval: f.Interval()}, nil
	}
}

// newForge is the client of one forge.
func newForge(f config.ForgeConfig, token string) (forge.Forge, error) {
	owner, name, _ := strings.Cut(f.Repository, "/")
	switch f.Kind {
	case forge.KindGitea:
		return gitea.New(gitea.Options{BaseURL: f.URL, Owner: owner, Repo: name, Token: token})
	case forge.KindGitHub:
		return github.New(github.Options{BaseURL: githubAPI(f.URL), Owner: owner, Repo: name, Token: token})
	case forge.KindGitLab:
		return gitlab.New(gitlab.Options{BaseURL: f.URL, Project: f.Repository, Token: token})
	}
	return nil, fmt.Errorf("unknown forge kind %q", f.Kind)
}

// githubAPI is the REST root of a GitHub web address: api.github.com for
// github.com, <host>/api/v3/ for GitHub Enterprise Server.
func githubAPI(web string) string {
	u, err := url.Parse(web)
	if err != nil || u.Host == "github.com" || u.Host == "www.github.com" {
		return "https://api.github.com/"
	}
	return strings.TrimSuffix(web, "/") + "/api/v3/"
}
