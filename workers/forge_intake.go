package workers

import (
	"crypto/sha256"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/starter"
	"github.com/azolla/azolla/workers/intake"
)

// IntakeWakeup lets the forge webhook wake the intake a worker process
// runs (package workers/intake): the ops server is up before the workers
// start, so it holds the service once there is one. The zero value, and
// nil, wake nothing.
type IntakeWakeup struct {
	s atomic.Pointer[intake.Service]
}

// Wake asks the intake, if one runs, to read the forges now.
func (w *IntakeWakeup) Wake() {
	if w == nil {
		return
	}
	if s := w.s.Load(); s != nil {
		s.Wake()
	}
}

func (w *IntakeWakeup) set(s *intake.Service) {
	if w != nil {
		w.s.Store(s)
	}
}

// IntakeRepositories are the repositories whose forge.intake has a
// trigger, with their forges opened (tokens read through getenv).
func IntakeRepositories(cfg config.Config, getenv func(string) string, trust *trustCaches) ([]intake.Repository, error) {
	var out []intake.Repository
	for _, r := range cfg.Patch.Repositories {
		fc := r.Forge
		if !fc.Enabled() || !fc.Intake.Enabled() {
			continue
		}
		tok, err := fc.Token(getenv)
		if err != nil {
			return nil, fmt.Errorf("forge intake of %s: %w", r.Repository, err)
		}
		client, err := newForge(fc, tok)
		if err != nil {
			return nil, fmt.Errorf("forge intake of %s: %w", r.Repository, err)
		}
		// The markers of azolla's comments are keyed by what only azolla
		// holds: a digest of its token, never the token.
		key := sha256.Sum256([]byte("azolla comment marker\x00" + tok))
		out = append(out, intake.Repository{Key: r.Repository, Kind: fc.Kind, Slug: fc.Repository,
			Source: domain.ForgeSource(fc.Kind, fc.URL, fc.Repository), Forge: client,
			Trust: forge.Trust{Forge: client, Repository: fc.Repository, Policy: fc.Trusted.Policy(),
				Cache: trust.of(r.Repository, fc.Interval())},
			Label: fc.Intake.Label, Assignee: fc.Intake.Assignee, Mention: fc.Intake.Mention,
			AsCapture: fc.Intake.Becomes() == config.IntakeAsCapture, AutoApproveWriters: fc.Intake.AutoApproveWriters,
			ApproveOnLabel: fc.Intake.ApproveOnLabel,
			PollInterval:   fc.Interval(), BudgetUSD: r.BudgetUSD, Attempts: r.Attempts, TimeBudget: cfg.Lifecycle.Budget,
			MarkerKey: key[:]})
	}
	return out, nil
}

// newIntake builds the worker process's forge intake; nil when no
// repository takes issues.
func newIntake(o Options, claims *claim.Bridge) (*intake.Service, error) {
	repos, err := IntakeRepositories(o.Config, os.Getenv, &trustCaches{caches: map[string]*forge.TrustCache{}})
	if err != nil || len(repos) == 0 {
		return nil, err
	}
	interval := time.Duration(0)
	for _, r := range repos {
		if interval == 0 || r.PollInterval < interval {
			interval = r.PollInterval
		}
	}
	s := &intake.Service{Store: o.Store, Claims: claims, Repositories: repos, Interval: interval,
		LeaseTTL: o.Config.Claim.LeaseTTL, OwnerID: o.Identity + ":intake", Log: o.Log,
		Decider: &starter.Starter{Client: o.Client, Store: o.Store, TaskQueue: o.Config.Temporal.TaskQueue,
			AttributesWait: -1}}
	if o.Metrics != nil {
		s.Observer = o.Metrics
	}
	return s, nil
}
