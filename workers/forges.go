package workers

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/azolla/azolla/activities"
	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/forge/gitea"
	"github.com/azolla/azolla/internal/forge/github"
	"github.com/azolla/azolla/internal/forge/gitlab"
	"github.com/azolla/azolla/workers/webhook"
)

// configForges are the forges of patch.repositories[].forge.
type configForges struct {
	cfg    config.Config
	getenv func(string) string
	// trust remembers, per repository, what its forge said of people,
	// for at most its poll interval: clients are built anew on every Open,
	// the answers outlive them.
	trust *trustCaches
}

// trustCaches are the repositories' trust caches, made on first use.
type trustCaches struct {
	mu     sync.Mutex
	caches map[string]*forge.TrustCache
}

func (c *trustCaches) of(repository string, ttl time.Duration) *forge.TrustCache {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.caches[repository] == nil {
		c.caches[repository] = forge.NewTrustCache(ttl, nil)
	}
	return c.caches[repository]
}

// NewForges gives the pull request steps each repository's forge from
// patch.repositories[].forge; nil when no repository has one. The token
// is read when a forge is opened, so a rotated one is picked up.
func NewForges(cfg config.Config, getenv func(string) string) activities.Forges {
	for _, r := range cfg.Patch.Repositories {
		if r.Forge.Enabled() {
			return configForges{cfg: cfg, getenv: getenv, trust: &trustCaches{caches: map[string]*forge.TrustCache{}}}
		}
	}
	return nil
}

// PathForgeWebhook is where a worker process serves the forge webhook, on
// its ops address.
const PathForgeWebhook = "/forge/webhook"

// ForgeWebhook builds the forge webhook (package workers/webhook) for the
// forges of patch.repositories[].forge, their webhook secrets read through
// getenv; it wakes lifecycles with wake (starter.Start), and the forge
// intake through intake.
func ForgeWebhook(cfg config.Config, getenv func(string) string, st webhook.Store, wake webhook.Waker,
	intake *IntakeWakeup, log *slog.Logger) http.Handler {
	forges := make([]config.ForgeConfig, 0, len(cfg.Patch.Repositories))
	for _, r := range cfg.Patch.Repositories {
		forges = append(forges, r.Forge)
	}
	return webhook.Handler(forges, getenv, st, wake, intake.Wake, log)
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
	trust := forge.Trust{Forge: client, Repository: fc.Repository, Policy: fc.Trusted.Policy(),
		Cache: f.trust.of(repository, fc.Interval())}
	return &activities.ForgeTarget{Forge: client, Kind: fc.Kind, Repository: fc.Repository, Draft: fc.Draft,
		Labels: fc.Labels, Reviewers: fc.Reviewers, AutoRevise: fc.AutoRevise, MaxRounds: fc.Rounds(),
		PollInterval: fc.Interval(), Trust: trust}, nil
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
