package integration

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/forge/gitea"
	"github.com/azolla/azolla/internal/forge/giteatest"
	"github.com/azolla/azolla/internal/lifecycle/claim"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/storetest"
	"github.com/azolla/azolla/workers/intake"
	"github.com/azolla/azolla/workers/webhook"
	"github.com/azolla/azolla/workflows"
)

// countingDecider records the decisions sent, by request id; it starts
// nothing (no lifecycle runs in this test).
type countingDecider struct {
	mu       sync.Mutex
	requests map[string]int
}

func (d *countingDecider) DecideOnce(_ context.Context, _, _, requestID string, _ workflows.Decision) (workflows.DecisionResult, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.requests[requestID]++
	return workflows.DecisionResult{EventID: "ev-test"}, nil
}

func (d *countingDecider) Start(context.Context, *domain.Objective) error { return nil }

// Exactly once on a real Gitea: an intake that dies right after the forge
// answered its read of the issues (before it could write), two workers'
// intakes passing at once, and each webhook delivery sent twice leave one
// objective per issue, one status comment on each, and one decision per
// command comment.
func TestForge_IntakeExactlyOnceUnderRacesRedeliveriesAndACrash(t *testing.T) {
	t.Parallel()
	s := giteatest.Shared(t)
	ctx := context.Background()
	r := giteatest.NewRepo(t, s)
	st := storetest.NewSQLite(t)
	slug := r.Owner + "/" + r.Name
	source := domain.ForgeSource(forge.KindGitea, s.URL, slug)
	decider := &countingDecider{requests: map[string]int{}}

	// The dying intake reads Gitea through a proxy that ends its process
	// (its context) as soon as the list of issues has been answered.
	var dying context.CancelFunc
	var died atomic.Bool
	target, err := url.Parse(s.URL)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(res *http.Response) error {
		if res.Request.Method == http.MethodGet && strings.HasSuffix(res.Request.URL.Path, "/issues") && res.StatusCode == 200 {
			body, err := io.ReadAll(res.Body)
			if err != nil {
				return err
			}
			res.Body = io.NopCloser(bytes.NewReader(body))
			if strings.Contains(string(body), `"number"`) && died.CompareAndSwap(false, true) {
				dying()
			}
		}
		return nil
	}
	viaProxy := httptest.NewServer(proxy)
	t.Cleanup(viaProxy.Close)

	service := func(owner, base string) *intake.Service {
		f, err := gitea.New(gitea.Options{BaseURL: base, Owner: r.Owner, Repo: r.Name, Token: s.Admin.Token})
		require.NoError(t, err)
		svc := &intake.Service{Store: st, Claims: claim.NewBridge(st), Decider: decider,
			Repositories: []intake.Repository{{Key: "/srv/once", Kind: forge.KindGitea, Slug: slug, Source: source,
				Forge: f, Trust: forge.Trust{Forge: f, Repository: slug, Policy: forge.TrustPolicy{MinPermission: forge.PermissionWrite}},
				Label: "azolla", PollInterval: time.Hour, MarkerKey: []byte("once")}},
			Interval: time.Hour, LeaseTTL: time.Second, OwnerID: owner, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
		t.Cleanup(svc.Stop)
		return svc
	}

	var numbers []int
	for i := range 3 {
		numbers = append(numbers, r.OpenIssue(t, s.Stranger, fmt.Sprintf("Once %d", i), "- [ ] once", []string{"azolla"}, nil))
	}
	dyingCtx, cancel := context.WithCancel(ctx)
	dying = cancel
	_, _, err = service("dies", viaProxy.URL).RunOnce(dyingCtx)
	require.Error(t, err, "the intake died in its pass")
	require.True(t, died.Load())
	items, err := st.ListIntakeItems(ctx, store.ListIntakeItemsParams{Source: source})
	require.NoError(t, err)
	require.Empty(t, items, "it died before writing")

	// Two workers' intakes, woken by every delivery, each delivered twice.
	a, b := service("worker-a", s.URL), service("worker-b", s.URL)
	a.Start(ctx)
	b.Start(ctx)
	const secret = "once-hook-secret"
	fc := config.ForgeConfig{Kind: forge.KindGitea, URL: s.URL, Repository: slug, TokenEnv: "X",
		WebhookSecretEnv: "ONCE_HOOK", Intake: config.IntakeConfig{Label: "azolla"}}
	hook := webhook.Handler([]config.ForgeConfig{fc}, func(string) string { return secret }, st,
		func(context.Context, *domain.Objective) error { return nil }, func() { a.Wake(); b.Wake() }, nil)
	deliver := func(body string) {
		for range 2 {
			req := httptest.NewRequest(http.MethodPost, "/forge/webhook", strings.NewReader(body))
			mac := hmac.New(sha256.New, []byte(secret))
			mac.Write([]byte(body))
			req.Header.Set("X-Gitea-Signature", hex.EncodeToString(mac.Sum(nil)))
			rec := httptest.NewRecorder()
			hook.ServeHTTP(rec, req)
			require.Equal(t, http.StatusAccepted, rec.Code)
		}
	}
	delivery := fmt.Sprintf(`{"action":"label_updated","repository":{"full_name":%q},"issue":{"number":%d}}`, slug, numbers[0])
	statusComments := func(n int) int {
		cs, err := a.Repositories[0].Forge.Comments(ctx, forge.Thread{Number: n}, time.Time{})
		require.NoError(t, err)
		k := 0
		for _, c := range cs {
			if strings.Contains(c.Body, "<!-- azolla:status ") {
				k++
			}
		}
		return k
	}
	require.Eventually(t, func() bool {
		deliver(delivery)
		items, err := st.ListIntakeItems(ctx, store.ListIntakeItemsParams{Source: source})
		require.NoError(t, err)
		return len(items) == 3 && statusComments(numbers[0]) == 1 && statusComments(numbers[1]) == 1 &&
			statusComments(numbers[2]) == 1
	}, 90*time.Second, 100*time.Millisecond, "every issue taken, with its status comment")

	approval := r.CommentAs(t, s.Reviewer, forge.Thread{Number: numbers[0]}, "/azolla approve")
	require.Eventually(t, func() bool {
		deliver(fmt.Sprintf(`{"action":"created","repository":{"full_name":%q},"issue":{"number":%d},"comment":{"id":1}}`,
			slug, numbers[0]))
		_, err := st.GetForgeCommand(ctx, source, approval)
		return err == nil
	}, 90*time.Second, 100*time.Millisecond, "the approval is carried out")
	for range 5 {
		deliver(delivery)
	}
	// Passes after the deliveries: led by one intake or the other.
	for _, svc := range []*intake.Service{a, b} {
		_, _, err := svc.RunOnce(ctx)
		require.NoError(t, err)
	}

	objs, err := st.ListObjectives(ctx, store.ListObjectivesParams{})
	require.NoError(t, err)
	require.Len(t, objs, 3, "one objective per issue")
	for _, n := range numbers {
		require.Equal(t, 1, statusComments(n), "one status comment on issue #%d", n)
	}
	decider.mu.Lock()
	defer decider.mu.Unlock()
	require.Len(t, decider.requests, 1, "one decision for the one command comment (repeats share its update id)")
	it, err := st.GetIntakeItem(ctx, source, fmt.Sprint(numbers[0]))
	require.NoError(t, err)
	cmds, err := st.ListForgeCommands(ctx, it.ObjectiveID)
	require.NoError(t, err)
	require.Len(t, cmds, 1)
}
