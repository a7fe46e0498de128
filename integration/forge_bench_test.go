package integration

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/forge/giteatest"
	"github.com/azolla/azolla/internal/store"
)

// forgeBenchObjectives is how many objectives BenchmarkForge takes
// through a PASS and one review each; the figures are their medians.
const forgeBenchObjectives = 5

// BenchmarkForge is a fixed-size workload, not a b.N benchmark (run it
// with -benchtime 1x). On a real Gitea and an in-process worker (the
// command generator, auto_revise on) it takes forgeBenchObjectives
// objectives one after another through:
//
//   - PASS to pull request visible: from the run record's created_at (the
//     gate's verdict) until the forge lists an open pull request from the
//     objective's branch, as a client polling the forge's API every 5 ms
//     sees it;
//   - review to next round: from the moment the forge answered the
//     review's POST until the next round's TICKET_READY event exists,
//     with `azolla pr sync` sent right after the review, as a webhook
//     would (the poll interval is an hour, so nothing else wakes it).
//
// The baseline, in the same run, is one call of the forge's API: GET of a
// pull request, median of 50. The ratios say how many forge calls' worth
// of time each path takes.
func BenchmarkForge(b *testing.B) {
	ctx := context.Background()
	s := giteatest.Shared(b)
	w := setupForge(b, s, func(f *config.ForgeConfig) { f.AutoRevise = true })

	var toVisible, toRound []time.Duration
	for i := range forgeBenchObjectives {
		id := uniqueID(fmt.Sprintf("fbench-%d", i))
		w.approve(b, id)
		branch := "azolla/" + id
		var number int
		require.Eventually(b, func() bool {
			var prs []struct {
				Number int `json:"number"`
				Head   struct {
					Ref string `json:"ref"`
				} `json:"head"`
			}
			if s.API(ctx, s.Admin.Token, http.MethodGet, w.repo.Path("/pulls?state=open&limit=50"), nil, &prs) != nil {
				return false
			}
			for _, p := range prs {
				if p.Head.Ref == branch {
					number = p.Number
					return true
				}
			}
			return false
		}, 2*time.Minute, 5*time.Millisecond, "no pull request for %s", branch)
		seen := time.Now()
		wos, err := w.store.ListWorkOrders(ctx, store.ListWorkOrdersParams{ObjectiveID: id})
		require.NoError(b, err)
		rr, err := w.store.GetRunRecord(ctx, wos[0].WorkOrderID)
		require.NoError(b, err)
		toVisible = append(toVisible, seen.Sub(rr.CreatedAt))

		w.waitRound(b, id, 1)
		review := map[string]any{"event": "REQUEST_CHANGES", "body": "Once more.", "comments": []map[string]any{
			{"path": "task.txt", "body": "Shorter.", "new_position": 1}}}
		require.NoError(b, s.API(ctx, s.Reviewer.Token, http.MethodPost,
			w.repo.Path(fmt.Sprintf("/pulls/%d/reviews", number)), review, nil))
		reviewed := time.Now()
		w.sync(b, id)
		var ev *domain.Event
		require.Eventually(b, func() bool {
			evs, err := w.store.ListEvents(ctx, store.ListEventsParams{SubjectID: id})
			if err != nil || len(evs) < 2 {
				return false
			}
			ev = evs[len(evs)-1]
			return true
		}, 2*time.Minute, 5*time.Millisecond, "no next round for %s", id)
		toRound = append(toRound, ev.CreatedAt.Sub(reviewed))
		w.waitRound(b, id, 2)
	}

	var api []time.Duration
	for range 50 {
		start := time.Now()
		require.NoError(b, s.API(ctx, s.Admin.Token, http.MethodGet, w.repo.Path("/pulls/1"), nil, nil))
		api = append(api, time.Since(start))
	}
	med := func(d []time.Duration) time.Duration {
		d = slices.Clone(d)
		slices.Sort(d)
		return d[len(d)/2]
	}
	b.ReportMetric(med(toVisible).Seconds(), "pass-to-pr-s")
	b.ReportMetric(med(toRound).Seconds(), "review-to-round-s")
	b.ReportMetric(float64(med(api).Microseconds())/1000, "forge-api-ms")
	b.ReportMetric(float64(med(toVisible))/float64(med(api)), "pass-to-pr-api-calls")
	b.ReportMetric(float64(med(toRound))/float64(med(api)), "review-to-round-api-calls")
}
