package integration

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/forge/gitea"
	"github.com/azolla/azolla/internal/forge/giteatest"
	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/internal/store/storetest"
	"github.com/azolla/azolla/workers/intake"
	"github.com/azolla/azolla/workers/webhook"
	"github.com/azolla/azolla/workflows"
)

// intakeBenchIssues is how many issues each path of BenchmarkIntake
// takes; the figures are their medians.
const intakeBenchIssues = 5

// intakeBenchPoll is the poll interval of BenchmarkIntake's polling path.
const intakeBenchPoll = 2 * time.Second

// startOnly is a Decider that starts nothing: the benchmark measures the
// intake, not the lifecycle.
type startOnly struct{}

func (startOnly) DecideOnce(context.Context, string, string, string, workflows.Decision) (workflows.DecisionResult, error) {
	return workflows.DecisionResult{}, nil
}
func (startOnly) Start(context.Context, *domain.Objective) error { return nil }

// BenchmarkIntake is a fixed-size workload (-benchtime 1x): on a real
// Gitea, intakeBenchIssues issues labelled azolla, one after another, each
// timed from the moment the forge answered the label's request until the
// store holds its objective (as a reader polling the store every 5 ms
// sees it):
//
//   - by poll: the intake reads the forge every intakeBenchPoll;
//   - by webhook: Gitea delivers its issue event to azolla's webhook
//     handler, which wakes the intake (whose poll is an hour).
//
// F1 sets each median against its bound: the poll interval plus a second
// by poll, one second by webhook. The forge's API, one GET of an issue
// (median of 20), is the run's baseline.
func BenchmarkIntake(b *testing.B) {
	ctx := context.Background()
	s := giteatest.Shared(b)
	api := func() time.Duration {
		var calls []time.Duration
		r := giteatest.NewRepo(b, s)
		n := r.OpenIssue(b, s.Admin, "probe", "x", nil, nil)
		for range 20 {
			start := time.Now()
			require.NoError(b, s.API(ctx, s.Admin.Token, http.MethodGet, r.Path(fmt.Sprintf("/issues/%d", n)), nil, nil))
			calls = append(calls, time.Since(start))
		}
		return median(calls)
	}()
	byPoll := intakeLatencies(b, s, intakeBenchPoll, false)
	byHook := intakeLatencies(b, s, time.Hour, true)
	b.ReportMetric(median(byPoll).Seconds(), "poll-to-objective-s")
	b.ReportMetric(median(byHook).Seconds(), "webhook-to-objective-s")
	b.ReportMetric(float64(api.Microseconds())/1000, "forge-api-ms")
	b.ReportMetric(float64(median(byPoll))/float64(intakeBenchPoll+time.Second), "f1-poll-ratio")
	b.ReportMetric(float64(median(byHook))/float64(time.Second), "f1-webhook-ratio")
}

// intakeLatencies labels intakeBenchIssues issues on a fresh repository
// read by an intake of poll interval poll, woken by Gitea's webhook
// deliveries when hook, and returns how long each took to become an
// objective.
func intakeLatencies(b *testing.B, s *giteatest.Server, poll time.Duration, hook bool) []time.Duration {
	ctx := context.Background()
	r := giteatest.NewRepo(b, s)
	st := storetest.NewSQLite(b)
	f, err := gitea.New(gitea.Options{BaseURL: s.URL, Owner: r.Owner, Repo: r.Name, Token: s.Admin.Token})
	require.NoError(b, err)
	slug := r.Owner + "/" + r.Name
	source := domain.ForgeSource(forge.KindGitea, s.URL, slug)
	svc := &intake.Service{Store: st, Claims: claim.NewBridge(st), Decider: startOnly{},
		Repositories: []intake.Repository{{Key: "/srv/bench", Kind: forge.KindGitea, Slug: slug, Source: source,
			Forge: f, Trust: forge.Trust{Forge: f, Repository: slug}, Label: "azolla", PollInterval: poll,
			MarkerKey: []byte("bench")}},
		Interval: poll, LeaseTTL: 10 * time.Second, OwnerID: "bench", Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if hook {
		const secret = "bench-hook-secret"
		fc := config.ForgeConfig{Kind: forge.KindGitea, URL: s.URL, Repository: slug, TokenEnv: "X",
			WebhookSecretEnv: "BENCH_HOOK", Intake: config.IntakeConfig{Label: "azolla"}}
		h := webhook.Handler([]config.ForgeConfig{fc}, func(string) string { return secret }, st,
			func(context.Context, *domain.Objective) error { return nil }, svc.Wake, nil)
		srv := httptest.NewServer(h)
		b.Cleanup(srv.Close)
		require.NoError(b, s.API(ctx, s.Admin.Token, http.MethodPost, r.Path("/hooks"), map[string]any{
			"type": "gitea", "active": true, "events": []string{"issues", "issue_label", "issue_assign", "issue_comment"},
			"config": map[string]string{"url": srv.URL, "content_type": "json", "secret": secret}}, nil))
	}
	svc.Start(ctx)
	b.Cleanup(svc.Stop)
	var out []time.Duration
	for i := range intakeBenchIssues {
		n := r.OpenIssue(b, s.Stranger, fmt.Sprintf("Bench issue %d", i), "x", []string{"azolla"}, nil)
		labelled := time.Now()
		require.Eventually(b, func() bool {
			_, err := st.GetIntakeItem(ctx, source, strconv.Itoa(n))
			return err == nil
		}, 2*time.Minute, 5*time.Millisecond, "issue #%d never became an objective", n)
		out = append(out, time.Since(labelled))
	}
	slices.Sort(out)
	return out
}

// median is the middle of d.
func median(d []time.Duration) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)/2]
}
