// Package slots limits how many runs go at once, per repository and for
// the whole deployment, with the claims every other step holds: a run slot
// is a claim (RUN_SLOT, <key>:<i>) that one run holds for its whole length
// and renews like any lease, so a dead worker's slot is free again once
// its lease lapses, whichever worker, local or remote, held it. A run that
// finds no free slot queues: a RUN_SLOT_WAIT claim whose resource id
// orders it among the other waiting runs, held while it waits.
//
// The order of a queue: urgency first (CRITICAL, HIGH, NORMAL, LOW), then,
// in the deployment's queue, the repository with the fewest runs holding
// one of its slots, then the person (who approved the objective, when
// known) with the fewest, then who asked first. A run takes a free slot only if
// fewer runs wait ahead of it than there are free slots, so a freed slot
// goes to the head of the queue, whichever worker sees it first.
//
// A run holds its repository's slot first and the deployment's second: it
// waits in the deployment's queue holding its repository's slot, so the
// two queues never wait on each other.
package slots

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/internal/store"
)

// DeploymentKey is the key of the deployment-wide limit's slots.
const DeploymentKey = "all"

// Limits are the concurrency limits; zero is no limit.
type Limits struct {
	// Deployment bounds the runs of every repository together.
	Deployment int
	// Repositories bounds each repository's runs, by the objective's
	// repository string.
	Repositories map[string]int
}

// Any reports whether any limit is set.
func (l Limits) Any() bool {
	if l.Deployment > 0 {
		return true
	}
	for _, n := range l.Repositories {
		if n > 0 {
			return true
		}
	}
	return false
}

// RepoKey is the key of repo's slots and queue: a digest, as a repository
// string (a URL, a path) is no claim resource id.
func RepoKey(repo string) string {
	h := sha256.Sum256([]byte(repo))
	return "r" + hex.EncodeToString(h[:8])
}

// Request is one run asking for a slot.
type Request struct {
	// Holder names the run: its workorder id, or its candidate's id.
	Holder     string
	Repository string
	Urgency    string
	// Person is who put the objective to work (its approver), "" when
	// unknown: the queues share slots fairly between people too.
	Person string
	// Since is when the run first asked: its place among equals.
	Since time.Time
}

// Grant is the slots a run was given, handed from the step that waited for
// them to the step that runs.
type Grant struct {
	Claims []domain.ClaimRecord `json:"claims,omitempty"`
}

// Slots hands run slots out under Limits.
type Slots struct {
	claims *claim.Bridge
	store  store.ClaimQuerier
	limits Limits
	ttl    time.Duration
	now    func() time.Time
	// Poll is how often a waiting run looks at its queue again (about;
	// jittered). Default one second.
	Poll time.Duration
}

// New returns the slots of limits over the claims table, whose leases last
// ttl. With no bridge, the slots are only read (Position, Queue).
func New(claims *claim.Bridge, st store.ClaimQuerier, limits Limits, ttl time.Duration, now func() time.Time) *Slots {
	if now == nil {
		now = time.Now
	}
	return &Slots{claims: claims, store: st, limits: limits, ttl: ttl, now: now, Poll: time.Second}
}

// Limited reports whether repo's runs take a slot at all.
func (s *Slots) Limited(repo string) bool { return s != nil && len(s.keys(repo)) > 0 }

type limit struct {
	key string
	n   int
}

// keys lists the limits a run of repo holds a slot of, repository first.
func (s *Slots) keys(repo string) []limit {
	var out []limit
	if n := s.limits.Repositories[repo]; n > 0 {
		out = append(out, limit{RepoKey(repo), n})
	}
	if s.limits.Deployment > 0 {
		out = append(out, limit{DeploymentKey, s.limits.Deployment})
	}
	return out
}

// Held is the slots one run holds.
type Held struct {
	leases []*claim.Lease
}

// Grant is what the run holds, to hand to the next step.
func (h *Held) Grant() Grant {
	var g Grant
	for _, l := range h.leases {
		g.Claims = append(g.Claims, l.Record())
	}
	return g
}

// Keep renews every slot while the run goes. The context it returns ends
// the moment any of them is lost: the run must stop, as another may hold
// its slot.
func (h *Held) Keep(ctx context.Context, o claim.KeepOptions) (context.Context, func()) {
	var stops []func()
	for _, l := range h.leases {
		var stop func()
		ctx, stop = l.Keep(ctx, o)
		stops = append(stops, stop)
	}
	return ctx, func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
}

// Release gives every slot up, the deployment's first.
func (h *Held) Release(ctx context.Context) {
	if h == nil {
		return
	}
	for i := len(h.leases) - 1; i >= 0; i-- {
		_ = h.leases[i].Release(ctx) // a lost slot is someone else's now
	}
	h.leases = nil
}

// owner names the holder of one of r's slots or places: the repository's
// and the person's keys first, as the queues count slots by both.
func owner(r Request) string {
	return RepoKey(r.Repository) + "/" + personKey(r.Person) + "/" + r.Holder
}

// unknownPerson is the person key of a run whose person is not known: it
// is never counted, so that unknown people are not one greedy one.
const unknownPerson = "p"

// personKey is a digest of person, unknownPerson for "".
func personKey(person string) string {
	if person == "" {
		return unknownPerson
	}
	h := sha256.Sum256([]byte(person))
	return "p" + hex.EncodeToString(h[:6])
}

// rank orders urgencies; an unknown one counts as NORMAL.
func rank(urgency string) int {
	switch urgency {
	case "CRITICAL":
		return 0
	case "HIGH":
		return 1
	case "LOW":
		return 3
	}
	return 2
}

// place is one run's place in a queue, as its RUN_SLOT_WAIT resource id
// spells it: <key>:<rank>:<since, nanoseconds>:<repository key>:<person
// key>:<holder>.
type place struct {
	key, repo, person, holder string
	rank                      int
	since                     int64
}

func (p place) id() string {
	return fmt.Sprintf("%s:%d:%019d:%s:%s:%s", p.key, p.rank, p.since, p.repo, p.person, p.holder)
}

func parsePlace(id string) (place, bool) {
	f := strings.SplitN(id, ":", 6)
	if len(f) != 6 {
		return place{}, false
	}
	r, err1 := strconv.Atoi(f[1])
	since, err2 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil {
		return place{}, false
	}
	return place{key: f[0], rank: r, since: since, repo: f[3], person: f[4], holder: f[5]}, true
}

func placeOf(k limit, r Request) place {
	return place{key: k.key, repo: RepoKey(r.Repository), person: personKey(r.Person), holder: r.Holder,
		rank: rank(r.Urgency), since: r.Since.UnixNano()}
}

// view is the queues and slots as one look at the claims table saw them.
type view struct {
	used map[string]int // live slots by key
	// running counts the deployment's live slots by repository key, and
	// every key's by person key (byPerson[key][person]).
	running  map[string]int
	byPerson map[string]map[string]int
	waiting  map[string][]place // by key
	live     map[string]bool    // live slot resource ids
}

func (s *Slots) look(ctx context.Context) (view, error) {
	now := s.now()
	v := view{used: map[string]int{}, running: map[string]int{}, byPerson: map[string]map[string]int{},
		waiting: map[string][]place{}, live: map[string]bool{}}
	claims, err := s.store.ListClaims(ctx, store.ListClaimsParams{
		ResourceTypes: []string{domain.ResourceRunSlot, domain.ResourceRunSlotWait}, LiveAt: &now})
	if err != nil {
		return v, fmt.Errorf("read run slots: %w", err)
	}
	for _, c := range claims {
		if c.ResourceType == domain.ResourceRunSlotWait {
			if p, ok := parsePlace(c.ResourceID); ok {
				v.waiting[p.key] = append(v.waiting[p.key], p)
			}
			continue
		}
		key, _, _ := strings.Cut(c.ResourceID, ":")
		v.used[key]++
		v.live[c.ResourceID] = true
		f := strings.SplitN(c.OwnerID, "/", 3)
		if len(f) < 3 {
			continue
		}
		if key == DeploymentKey {
			v.running[f[0]]++
		}
		if v.byPerson[key] == nil {
			v.byPerson[key] = map[string]int{}
		}
		v.byPerson[key][f[1]]++
	}
	return v, nil
}

// before orders two places of one queue.
func (v view) before(a, b place) bool {
	if c := cmp.Compare(a.rank, b.rank); c != 0 {
		return c < 0
	}
	if a.key == DeploymentKey {
		if c := cmp.Compare(v.running[a.repo], v.running[b.repo]); c != 0 {
			return c < 0
		}
	}
	if c := cmp.Compare(v.people(a), v.people(b)); c != 0 {
		return c < 0
	}
	if c := cmp.Compare(a.since, b.since); c != 0 {
		return c < 0
	}
	return a.holder < b.holder
}

// people is how many of p's limit's slots p's person holds, 0 when the
// person is unknown.
func (v view) people(p place) int {
	if p.person == unknownPerson {
		return 0
	}
	return v.byPerson[p.key][p.person]
}

// ahead counts the runs waiting before p in its queue.
func (v view) ahead(p place) int {
	n := 0
	for _, o := range v.waiting[p.key] {
		if o.holder != p.holder && v.before(o, p) {
			n++
		}
	}
	return n
}

// take takes one of k's slots for r if p's turn has come: fewer runs wait
// ahead of it than there are free slots. It reports how many wait ahead.
func (s *Slots) take(ctx context.Context, v view, k limit, p place, r Request) (*claim.Lease, int, error) {
	ahead := v.ahead(p)
	if ahead >= k.n-v.used[k.key] {
		return nil, ahead, nil
	}
	for i := range k.n {
		id := k.key + ":" + strconv.Itoa(i)
		if v.live[id] {
			continue
		}
		l, ok, err := s.claims.Acquire(ctx, domain.ResourceRunSlot, id, owner(r), s.ttl)
		if err != nil {
			return nil, ahead, fmt.Errorf("take run slot %s: %w", id, err)
		}
		if ok {
			return l, ahead, nil
		}
	}
	return nil, ahead, nil
}

// Try takes r's slots if they are free and no run waits ahead of it; it
// holds none when it says no.
func (s *Slots) Try(ctx context.Context, r Request) (*Held, bool, error) {
	keys := s.keys(r.Repository)
	if len(keys) == 0 {
		return &Held{}, true, nil
	}
	v, err := s.look(ctx)
	if err != nil {
		return nil, false, err
	}
	r.Since = s.now()
	h := &Held{}
	for _, k := range keys {
		l, _, err := s.take(ctx, v, k, placeOf(k, r), r)
		if err != nil || l == nil {
			h.Release(ctx)
			return nil, false, err
		}
		h.leases = append(h.leases, l)
	}
	return h, true, nil
}

// Adopt takes over the slots g names, handed from the step that waited for
// them. ok is false, and nothing is held, when any of them lapsed meanwhile.
func (s *Slots) Adopt(ctx context.Context, g Grant) (*Held, bool, error) {
	h := &Held{}
	for _, rec := range g.Claims {
		l := s.claims.Adopt(rec, s.ttl)
		if err := l.Renew(ctx); err != nil {
			h.Release(ctx)
			if errors.Is(err, claim.ErrLeaseLost) {
				return nil, false, nil
			}
			return nil, false, fmt.Errorf("hold run slot %s: %w", rec.ResourceID, err)
		}
		h.leases = append(h.leases, l)
	}
	return h, true, nil
}

// Wait queues r for its slots and returns once it holds them all, telling
// progress how many runs wait ahead of it at each look. Its places are
// held, and the slots it already has kept, while it waits; a cancelled ctx
// gives everything up.
func (s *Slots) Wait(ctx context.Context, r Request, progress func(ahead int)) (_ *Held, err error) {
	h := &Held{}
	var stops []func()
	defer func() {
		for _, stop := range stops {
			stop()
		}
		if err != nil {
			h.Release(context.WithoutCancel(ctx))
		}
	}()
	wctx := ctx // ends when a slot already held is lost
	for _, k := range s.keys(r.Repository) {
		l, err := s.waitFor(wctx, k, r, progress)
		if err != nil {
			return nil, err
		}
		h.leases = append(h.leases, l)
		var stop func()
		wctx, stop = l.Keep(wctx, claim.KeepOptions{})
		stops = append(stops, stop)
	}
	return h, nil
}

// waitFor waits for one of k's slots, holding r's place in k's queue.
func (s *Slots) waitFor(ctx context.Context, k limit, r Request, progress func(int)) (*claim.Lease, error) {
	p := placeOf(k, r)
	var spot *claim.Lease
	stopSpot := func() {}
	defer func() {
		stopSpot()
		if spot != nil {
			_ = spot.Release(context.WithoutCancel(ctx))
		}
	}()
	for {
		if spot == nil {
			// A place still held by an earlier attempt of the same run is
			// the same place: it is taken over once it lapses.
			l, ok, err := s.claims.Acquire(ctx, domain.ResourceRunSlotWait, p.id(), owner(r), s.ttl)
			if err != nil {
				return nil, fmt.Errorf("queue for run slot %s: %w", k.key, err)
			}
			if ok {
				spot = l
				_, stopSpot = l.Keep(ctx, claim.KeepOptions{})
			}
		}
		v, err := s.look(ctx)
		if err != nil {
			return nil, err
		}
		l, ahead, err := s.take(ctx, v, k, p, r)
		if err != nil || l != nil {
			return l, err
		}
		if progress != nil {
			progress(ahead)
		}
		t := time.NewTimer(s.Poll/2 + rand.N(s.Poll))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, context.Cause(ctx)
		case <-t.C:
		}
	}
}

// Queued is where a run waits: which limit, how many runs wait ahead of it
// and how many slots the limit has.
type Queued struct {
	Deployment bool
	Ahead      int
	Limit      int
}

// Position says whether the run of workorder wo (or one of its
// candidates, <wo>-c<k>) waits for a slot and where: the one nearest the
// head of its queue. A nil *Slots (no limits) never queues.
func (s *Slots) Position(ctx context.Context, wo string) (Queued, bool, error) {
	if s == nil {
		return Queued{}, false, nil
	}
	v, err := s.look(ctx)
	if err != nil {
		return Queued{}, false, err
	}
	var best Queued
	found := false
	for key, places := range v.waiting {
		for _, p := range places {
			if WorkOrderOf(p.holder) != wo {
				continue
			}
			q := Queued{Deployment: key == DeploymentKey, Ahead: v.ahead(p), Limit: s.limits.Deployment}
			if !q.Deployment {
				for repo, n := range s.limits.Repositories {
					if RepoKey(repo) == key {
						q.Limit = n
					}
				}
			}
			if !found || q.Ahead < best.Ahead {
				best, found = q, true
			}
		}
	}
	return best, found, nil
}

// Waiting is one run queued for a slot.
type Waiting struct {
	// Holder is the run: a workorder id, or a candidate's <id>-c<k>.
	Holder string
	Queued
}

// Queue lists the runs waiting for a slot, nearest their turn first. A
// nil *Slots (no limits) has none.
func (s *Slots) Queue(ctx context.Context) ([]Waiting, error) {
	if s == nil {
		return nil, nil
	}
	v, err := s.look(ctx)
	if err != nil {
		return nil, err
	}
	var out []Waiting
	for key, places := range v.waiting {
		for _, p := range places {
			out = append(out, Waiting{Holder: p.holder, Queued: Queued{Deployment: key == DeploymentKey, Ahead: v.ahead(p)}})
		}
	}
	slices.SortFunc(out, func(a, b Waiting) int {
		return cmp.Or(cmp.Compare(a.Ahead, b.Ahead), strings.Compare(a.Holder, b.Holder))
	})
	return out, nil
}

// WorkOrderOf is the workorder of a run's holder: the holder itself, or
// the workorder of candidate <work_order_id>-c<k>.
func WorkOrderOf(holder string) string {
	if i := strings.LastIndex(holder, "-c"); i > 0 {
		if _, err := strconv.Atoi(holder[i+2:]); err == nil {
			return holder[:i]
		}
	}
	return holder
}
