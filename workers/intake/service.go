package intake

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/internal/maintenance"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/workflows"
)

// Store is what intake reads and writes: the items and commands, the
// objectives and captures they become, and what the status comment tells
// (pauses, pull request, spend).
type Store interface {
	store.IntakeTaker
	store.ObjectiveQuerier
	store.PauseQuerier
	store.PullRequestQuerier
	store.SpendQuerier
}

// Decider sends decisions to lifecycles: the starter, as the CLI uses it.
type Decider interface {
	// DecideOnce sends one decision; the lifecycle takes one per
	// requestID.
	DecideOnce(ctx context.Context, objectiveID, kind, requestID string, d workflows.Decision) (workflows.DecisionResult, error)
	// Start starts (or wakes) an objective's lifecycle.
	Start(ctx context.Context, o *domain.Objective) error
}

// Observer counts what intake does (package ops's metrics).
type Observer interface {
	// Intake counts one item read from a forge of kind source: result is
	// created, exists, updated, closed, untrusted or failed.
	Intake(source, result string)
	// Command counts one command comment: result is done, refused,
	// untrusted or failed.
	Command(command, result string)
}

// Repository is one repository whose issues may become work.
type Repository struct {
	// Key is the repository as patch.repositories names it: what an
	// objective's repository is.
	Key string
	// Kind and Slug say where it is on its forge (forge.KindGitea …,
	// owner/name); Source is its domain.ForgeSource.
	Kind, Slug, Source string
	Forge              forge.Forge
	// Trust decides whose words count (forge.trusted).
	Trust forge.Trust
	// Label, Assignee and Mention are the triggers (forge.intake): an
	// issue matching any of those set enters.
	Label, Assignee, Mention string
	// AsCapture makes issues captures for the triage track, not
	// objectives.
	AsCapture bool
	// AutoApproveWriters approves the objective of a trusted author's
	// issue without a command; ApproveOnLabel that of an issue whose Label
	// someone trusted applied.
	AutoApproveWriters bool
	ApproveOnLabel     bool
	// PollInterval is how often the forge is read.
	PollInterval time.Duration
	// BudgetUSD and Attempts are the repository's defaults for a new
	// objective (patch.repositories[]); TimeBudget its run's time budget,
	// told in the status comment.
	BudgetUSD  float64
	Attempts   int
	TimeBudget time.Duration
	// MarkerKey keys the markers of azolla's comments (derived from the
	// forge token, which nobody else holds).
	MarkerKey []byte
}

// Service reads the repositories' forges; see the package doc.
type Service struct {
	Store        Store
	Claims       *claim.Bridge
	Decider      Decider
	Repositories []Repository
	// Interval is how often the service looks whether a repository is due
	// (each is read every PollInterval); LeaseTTL the leadership's lease.
	Interval time.Duration
	LeaseTTL time.Duration
	OwnerID  string
	Log      *slog.Logger
	Observer Observer
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// WakeCheck is how often the leader looks whether another worker was
	// woken (default a second): a webhook delivery reaches whichever
	// worker the forge's request landed on.
	WakeCheck time.Duration

	// led says whether this instance led its last pass.
	led       atomic.Bool
	stopWatch context.CancelFunc
	loopOnce  sync.Once
	loop      *maintenance.Loop[Counts]
	mu        sync.Mutex
	lastRead  map[string]time.Time
	// notBefore holds a repository back while its forge asked azolla to
	// slow down (a rate limit's Retry-After), wakes included.
	notBefore map[string]time.Time
	woken     bool
}

// Counts says what one pass did.
type Counts struct {
	Repositories int // repositories read
	Issues       int // issues looked at
	Created      int // objectives or captures created
	Updated      int // NEW objectives whose issue was edited
	Closed       int // objectives whose issue was closed
	Commands     int // command comments acted on (refusals included)
	Statuses     int // status comments posted or edited
	Failed       int // items whose handling failed: logged, tried again next pass
}

func (s *Service) background() *maintenance.Loop[Counts] {
	s.loopOnce.Do(func() {
		s.loop = &maintenance.Loop[Counts]{Name: "forge intake", Interval: s.Interval, Pass: s.pass, Log: s.Log,
			Leadership: &maintenance.Leadership{Name: "forge intake", Claims: s.Claims,
				ResourceType: domain.ResourceForgeIntake, ResourceID: domain.ForgeIntakeLeadership, Owner: s.OwnerID,
				TTL: s.LeaseTTL, Log: s.Log},
			Passed: func(c Counts, led bool, err error) {
				s.led.Store(led)
				if led && err == nil && (c.Created+c.Updated+c.Closed+c.Commands+c.Statuses+c.Failed) > 0 {
					s.log().Info("forge intake pass", "repositories", c.Repositories, "issues", c.Issues,
						"created", c.Created, "updated", c.Updated, "closed", c.Closed, "commands", c.Commands,
						"statuses", c.Statuses, "failed", c.Failed)
				}
			}}
	})
	return s.loop
}

// Start runs a pass now and then every Interval, until Stop or ctx ends.
func (s *Service) Start(ctx context.Context) {
	// Wakes recorded before the first pass are that pass's to follow.
	seen, err := s.Store.IntakeCursor(ctx, wakeSource)
	if err != nil {
		s.log().Warn("forge intake: look for a recorded wake", "error", err)
	}
	s.background().Start(ctx)
	ctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	s.stopWatch = cancel
	s.mu.Unlock()
	go s.watchWakes(ctx, seen)
}

// Stop ends the passes and gives the leadership up.
func (s *Service) Stop() {
	s.mu.Lock()
	stop := s.stopWatch
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
	s.background().Stop()
}

// Wake reads every repository at the next pass, which starts now: a
// webhook delivery said something changed. Nothing in the delivery is
// taken as fact; the forge is read. An instance that does not lead
// records the wake in the store, where the leader finds it.
func (s *Service) Wake() {
	s.wakeHere()
	if s.led.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	now := s.now()
	if err := s.Store.SetIntakeCursor(ctx, wakeSource, now.UTC().Format(time.RFC3339Nano), now); err != nil {
		s.log().Warn("forge intake: record a wake for the leader", "error", err)
	}
}

// wakeSource is the intake cursor a wake is recorded under, for the
// leader to find (not a source any item can have: those name a forge's
// kind, or a posted document's source).
const wakeSource = "azolla:wake"

// watchWakes wakes this instance, while it leads, when another recorded
// a wake since it last looked. One recorded before it began to lead costs
// at most one pass more.
func (s *Service) watchWakes(ctx context.Context, seen string) {
	every := s.WakeCheck
	if every <= 0 {
		every = time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !s.led.Load() {
			continue
		}
		raw, err := s.Store.IntakeCursor(ctx, wakeSource)
		switch {
		case err != nil:
			if ctx.Err() == nil {
				s.log().Warn("forge intake: look for a recorded wake", "error", err)
			}
		case raw != seen:
			seen = raw
			s.wakeHere()
		}
	}
}

// wakeHere makes this instance's next pass, which starts now, read every
// repository.
func (s *Service) wakeHere() {
	s.mu.Lock()
	s.woken = true
	s.mu.Unlock()
	s.background().Wake()
}

// RunOnce is one pass, if this instance leads, reading every repository
// whatever its interval.
func (s *Service) RunOnce(ctx context.Context) (Counts, bool, error) {
	s.mu.Lock()
	s.woken = true
	s.mu.Unlock()
	return s.background().RunOnce(ctx)
}

// pass reads each repository that is due.
func (s *Service) pass(ctx context.Context) (Counts, error) {
	var c Counts
	s.mu.Lock()
	woken := s.woken
	s.woken = false
	if s.lastRead == nil {
		s.lastRead, s.notBefore = map[string]time.Time{}, map[string]time.Time{}
	}
	s.mu.Unlock()
	now := s.now()
	for i := range s.Repositories {
		r := &s.Repositories[i]
		s.mu.Lock()
		last, read := s.lastRead[r.Source]
		held := now.Before(s.notBefore[r.Source])
		s.mu.Unlock()
		// Due at the pass nearest its poll interval, not the first pass
		// after it: passes start a tick apart give or take the scheduler,
		// and "a whole interval since" would skip every other one of a
		// repository polled at the loop's own interval.
		if held || (!woken && read && now.Sub(last) < r.PollInterval-s.Interval/2) {
			continue
		}
		c.Repositories++
		if err := s.read(ctx, r, &c); err != nil {
			if ctx.Err() != nil {
				return c, ctx.Err()
			}
			c.Failed++
			var rl *forge.RateLimitError
			if errors.As(err, &rl) {
				s.mu.Lock()
				s.notBefore[r.Source] = now.Add(rl.RetryAfter)
				s.mu.Unlock()
			}
			s.log().Warn("forge intake: read "+r.Slug, "forge", r.Kind, "error", err)
			continue
		}
		s.mu.Lock()
		s.lastRead[r.Source] = now
		s.mu.Unlock()
	}
	return c, nil
}

// cursorLayout is how a repository's cursor is stored: the newest update
// time read, to the second, as the forges give it.
const cursorLayout = time.RFC3339

// read is one repository's turn: the issues updated since its cursor, the
// comments on the threads of its open items, and the status comments.
func (s *Service) read(ctx context.Context, r *Repository, c *Counts) error {
	raw, err := s.Store.IntakeCursor(ctx, r.Source)
	if err != nil {
		return err
	}
	var since time.Time
	if raw != "" {
		if since, err = time.Parse(cursorLayout, raw); err != nil {
			return fmt.Errorf("intake cursor of %s: %w", r.Source, err)
		}
	}
	issues, err := r.Forge.Issues(ctx, since)
	if err != nil {
		return fmt.Errorf("read the issues of %s: %w", r.Slug, err)
	}
	newest := since
	var slowDown error
	for _, is := range issues {
		c.Issues++
		if err := s.issue(ctx, r, is, c); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			c.Failed++
			s.log().Warn("forge intake: issue", "repository", r.Slug, "issue", is.Number, "error", err)
			s.observe(r, "failed")
			var rl *forge.RateLimitError
			if errors.As(err, &rl) {
				slowDown = err
			}
			// The cursor stays before this issue (issues come oldest
			// update first): it is read again next pass.
			break
		}
		if is.UpdatedAt.After(newest) {
			newest = is.UpdatedAt
		}
	}
	if !newest.Equal(since) {
		if err := s.Store.SetIntakeCursor(ctx, r.Source, newest.UTC().Format(cursorLayout), s.now()); err != nil {
			return err
		}
	}
	if slowDown != nil {
		return slowDown
	}
	return s.threads(ctx, r, c)
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Service) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

func (s *Service) observe(r *Repository, result string) {
	if s.Observer != nil {
		s.Observer.Intake(r.Kind, result)
	}
}
