package slots_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/internal/lifecycle/slots"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/storetest"
)

func forEachBackend(t *testing.T, test func(t *testing.T, st store.Store)) {
	for _, be := range storetest.Backends() {
		t.Run(be.Name, func(t *testing.T) { test(t, be.Open(t)) })
	}
}

func newSlots(st store.Store, l slots.Limits, now func() time.Time) *slots.Slots {
	opts := []claim.Option{}
	if now != nil {
		opts = append(opts, claim.WithClock(now))
	}
	s := slots.New(claim.NewBridge(st, opts...), st, l, time.Minute, now)
	s.Poll = 10 * time.Millisecond
	return s
}

func req(holder, repo, urgency string) slots.Request {
	return slots.Request{Holder: holder, Repository: repo, Urgency: urgency, Since: time.Now()}
}

func TestTry_RepositoryLimitHoldsAndOtherRepositoriesGo(t *testing.T) {
	forEachBackend(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		s := newSlots(st, slots.Limits{Repositories: map[string]int{"/repo/a": 1}}, nil)
		a1, ok, err := s.Try(ctx, req("wo-a1", "/repo/a", "NORMAL"))
		require.NoError(t, err)
		require.True(t, ok)
		_, ok, err = s.Try(ctx, req("wo-a2", "/repo/a", "NORMAL"))
		require.NoError(t, err)
		require.False(t, ok, "a second run of a repository limited to one")
		b, ok, err := s.Try(ctx, req("wo-b1", "/repo/b", "NORMAL"))
		require.NoError(t, err)
		require.True(t, ok, "a repository without a limit")
		require.Empty(t, b.Grant().Claims, "no limit, no slot")
		a1.Release(ctx)
		_, ok, err = s.Try(ctx, req("wo-a2", "/repo/a", "NORMAL"))
		require.NoError(t, err)
		require.True(t, ok, "the slot is free once released")
	})
}

func TestTry_DeadHoldersSlotIsTakenOverAfterItsLease(t *testing.T) {
	forEachBackend(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		limits := slots.Limits{Deployment: 1}
		dead := newSlots(st, limits, nil)
		held, ok, err := dead.Try(ctx, req("wo-1", "/repo/a", "NORMAL"))
		require.NoError(t, err)
		require.True(t, ok)
		_, ok, err = newSlots(st, limits, nil).Try(ctx, req("wo-2", "/repo/a", "NORMAL"))
		require.NoError(t, err)
		require.False(t, ok, "the lease is live")
		later := newSlots(st, limits, func() time.Time { return time.Now().Add(time.Hour) })
		_, ok, err = later.Try(ctx, req("wo-2", "/repo/a", "NORMAL"))
		require.NoError(t, err)
		require.True(t, ok, "taken over once the lease lapsed")

		// The dead holder's hold is gone: handing it on finds it lost.
		_, ok, err = dead.Adopt(ctx, held.Grant())
		require.NoError(t, err)
		require.False(t, ok)
	})
}

func TestAdopt_HoldsTheGrantedSlot(t *testing.T) {
	forEachBackend(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		s := newSlots(st, slots.Limits{Repositories: map[string]int{"/repo/a": 1}, Deployment: 4}, nil)
		held, ok, err := s.Try(ctx, req("wo-1", "/repo/a", "NORMAL"))
		require.NoError(t, err)
		require.True(t, ok)
		g := held.Grant()
		require.Len(t, g.Claims, 2, "the repository's slot and the deployment's")
		adopted, ok, err := s.Adopt(ctx, g)
		require.NoError(t, err)
		require.True(t, ok)
		_, ok, err = s.Try(ctx, req("wo-2", "/repo/a", "NORMAL"))
		require.NoError(t, err)
		require.False(t, ok, "the adopted slot is still held")
		adopted.Release(ctx)
		_, ok, err = s.Try(ctx, req("wo-2", "/repo/a", "NORMAL"))
		require.NoError(t, err)
		require.True(t, ok)
	})
}

// waitAll starts Wait for each request and returns a channel that names
// each holder as it gets its slot.
func waitAll(ctx context.Context, t *testing.T, s *slots.Slots, rs ...slots.Request) (<-chan string, map[string]*slots.Held, *sync.Mutex) {
	got := make(chan string, len(rs))
	held, mu := map[string]*slots.Held{}, &sync.Mutex{}
	for _, r := range rs {
		go func() {
			h, err := s.Wait(ctx, r, nil)
			if err != nil {
				if ctx.Err() == nil {
					t.Errorf("wait %s: %v", r.Holder, err)
				}
				return
			}
			mu.Lock()
			held[r.Holder] = h
			mu.Unlock()
			got <- r.Holder
		}()
	}
	return got, held, mu
}

func queued(t *testing.T, s *slots.Slots, wo string) func() bool {
	return func() bool {
		_, ok, err := s.Position(context.Background(), wo)
		require.NoError(t, err)
		return ok
	}
}

func TestWait_UrgencyGoesFirstThenFirstCome(t *testing.T) {
	forEachBackend(t, func(t *testing.T, st store.Store) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s := newSlots(st, slots.Limits{Repositories: map[string]int{"/repo/a": 1}}, nil)
		first, ok, err := s.Try(ctx, req("wo-0", "/repo/a", "LOW"))
		require.NoError(t, err)
		require.True(t, ok)
		early := req("wo-normal-early", "/repo/a", "NORMAL")
		late := req("wo-normal-late", "/repo/a", "NORMAL")
		late.Since = early.Since.Add(time.Second)
		critical := req("wo-critical", "/repo/a", "CRITICAL")
		critical.Since = late.Since.Add(time.Second)
		got, held, mu := waitAll(ctx, t, s, late, critical, early)
		for _, wo := range []string{"wo-normal-late", "wo-critical", "wo-normal-early"} {
			require.Eventually(t, queued(t, s, wo), 10*time.Second, 5*time.Millisecond)
		}
		q, _, err := s.Position(ctx, "wo-normal-late")
		require.NoError(t, err)
		require.Equal(t, slots.Queued{Ahead: 2, Limit: 1}, q)

		// A run asking now, with no urgency over them, waits its turn.
		_, ok, err = s.Try(ctx, req("wo-new", "/repo/a", "NORMAL"))
		require.NoError(t, err)
		require.False(t, ok)

		release := first
		for _, want := range []string{"wo-critical", "wo-normal-early", "wo-normal-late"} {
			release.Release(ctx)
			require.Equal(t, want, <-got)
			mu.Lock()
			release = held[want]
			mu.Unlock()
		}
	})
}

func TestWait_DeploymentSlotGoesToTheRepositoryWithFewestRunning(t *testing.T) {
	forEachBackend(t, func(t *testing.T, st store.Store) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s := newSlots(st, slots.Limits{Deployment: 2}, nil)
		busy, ok, err := s.Try(ctx, req("wo-busy-1", "/repo/busy", "NORMAL"))
		require.NoError(t, err)
		require.True(t, ok)
		other, ok, err := s.Try(ctx, req("wo-other", "/repo/other", "NORMAL"))
		require.NoError(t, err)
		require.True(t, ok)
		defer busy.Release(ctx)

		// The busy repository asked first, but already runs one.
		busy2 := req("wo-busy-2", "/repo/busy", "NORMAL")
		lone := req("wo-lone", "/repo/lone", "NORMAL")
		lone.Since = busy2.Since.Add(time.Minute)
		got, _, _ := waitAll(ctx, t, s, busy2, lone)
		require.Eventually(t, queued(t, s, "wo-busy-2"), 10*time.Second, 5*time.Millisecond)
		require.Eventually(t, queued(t, s, "wo-lone"), 10*time.Second, 5*time.Millisecond)
		other.Release(ctx)
		require.Equal(t, "wo-lone", <-got)
	})
}

func TestWait_NeverMoreHoldersThanSlots(t *testing.T) {
	forEachBackend(t, func(t *testing.T, st store.Store) {
		ctx := context.Background()
		const limit, runs = 2, 12
		var alive, most atomic.Int32
		var wg sync.WaitGroup
		for i := range runs {
			// Each run on its own Slots, as each on its own worker.
			s := newSlots(st, slots.Limits{Repositories: map[string]int{"/repo/a": limit}}, nil)
			wg.Go(func() {
				h, err := s.Wait(ctx, req(fmt.Sprintf("wo-%02d", i), "/repo/a", "NORMAL"), nil)
				if !assertNoError(t, err) {
					return
				}
				n := alive.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				time.Sleep(time.Millisecond) // a run's work; the checks never wait on it
				alive.Add(-1)
				h.Release(ctx)
			})
		}
		wg.Wait()
		require.LessOrEqual(t, most.Load(), int32(limit))
		require.Positive(t, most.Load())
	})
}

func assertNoError(t *testing.T, err error) bool {
	t.Helper()
	if err != nil {
		t.Error(err)
		return false
	}
	return true
}

func TestWait_ASlotGoesToThePersonWithFewestRunning(t *testing.T) {
	forEachBackend(t, func(t *testing.T, st store.Store) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s := newSlots(st, slots.Limits{Repositories: map[string]int{"/repo/a": 2}}, nil)
		byAna := req("wo-ana-1", "/repo/a", "NORMAL")
		byAna.Person = "ana"
		running, ok, err := s.Try(ctx, byAna)
		require.NoError(t, err)
		require.True(t, ok)
		defer running.Release(ctx)
		other, ok, err := s.Try(ctx, req("wo-unknown", "/repo/a", "NORMAL"))
		require.NoError(t, err)
		require.True(t, ok)

		// Ana asked first, but already runs one; Bob runs none.
		ana2, bob := req("wo-ana-2", "/repo/a", "NORMAL"), req("wo-bob", "/repo/a", "NORMAL")
		ana2.Person, bob.Person = "ana", "bob"
		bob.Since = ana2.Since.Add(time.Minute)
		got, _, _ := waitAll(ctx, t, s, ana2, bob)
		require.Eventually(t, queued(t, s, "wo-ana-2"), 10*time.Second, 5*time.Millisecond)
		require.Eventually(t, queued(t, s, "wo-bob"), 10*time.Second, 5*time.Millisecond)
		q, _, err := s.Position(ctx, "wo-ana-2")
		require.NoError(t, err)
		require.Equal(t, 1, q.Ahead, "Bob is ahead of Ana's second run")
		other.Release(ctx)
		require.Equal(t, "wo-bob", <-got)
	})
}
