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

// configForges are the forges of patch.repositories[].forge.
type configForges struct {
	cfg    config.Config
	getenv func(string) string
}

// NewForges gives the pull request steps each repository's forge from
// patch.repositories[].forge; nil when no repository has one. The token
// is read when a forge is opened, so a rotated one is picked up.
func NewForges(cfg config.Config, getenv func(string) string) activities.Forges {
	for _, r := range cfg.Patch.Repositories {
		if r.Forge.Enabled() {
			return configForges{cfg: cfg, getenv: getenv}
		}
	}
	return nil
}

// Has implements activities.Forges.
func (f configForges) Has(repository string) bool {
	return f.cfg.Patch.Repository(repository).Forge.Enabled()
}

// Open implements activities.Forges.
func (f configForges) Open(repository string) (*activities.ForgeTarget, error) {
	fc := f.cfg.Patch.Repository(repository).Forge
	if !fc.Enabled() {
		return nil, nil
	}
	tok, err := fc.Token(f.getenv)
	if err != nil {
		return nil, err
	}
	client, err := newForge(fc, tok)
	if err != nil {
		return nil, fmt.Errorf("forge %s of %s: %w", fc.Kind, repository, err)
	}
	return &activities.ForgeTarget{Forge: client, Kind: fc.Kind, Repository: fc.Repository, Draft: fc.Draft,
		Labels: fc.Labels, Reviewers: fc.Reviewers, AutoRevise: fc.AutoRevise, MaxRounds: fc.Rounds(),
		PollInterval: fc.Interval()}, nil
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
