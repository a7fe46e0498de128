package integration

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/sandbox/sandboxtest"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/workflows"
)

const egressCanary = "canary-model-key-e9f4b1c7"

// An agent whose network is an allowlist reaches its model through
// azolla's egress proxy, which adds the model's key on the way out, and
// reaches nothing else; the refusal is in the run's notes; the key is in
// no record, and the agent saw it nowhere (its environment, /proc).
func TestEgress_TheAgentReachesItsModelWithAKeyItNeverHolds(t *testing.T) {
	t.Parallel()
	sandboxtest.RequireBwrap(t)
	var mu sync.Mutex
	var keys []string
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("X-Api-Key"))
		mu.Unlock()
		fmt.Fprint(w, "the model says hello")
	}))
	t.Cleanup(model.Close)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "exfiltrated")
	}))
	t.Cleanup(other.Close)
	modelHost, otherHost := strings.TrimPrefix(model.URL, "http://"), strings.TrimPrefix(other.URL, "http://")

	agent := fmt.Sprintf(`curl -sS "$MODEL_BASE_URL/v1/messages" > answer.txt
curl -sS --noproxy '' -o /dev/null -w '%%{http_code}' http://%s/steal > other.txt
echo "env $(env | grep -c %s) proc $(cat /proc/[0-9]*/environ 2>/dev/null | tr '\0' '\n' | grep -c %s)" > seen.txt`,
		otherHost, egressCanary, egressCanary)
	repo := sampleRepo(t)
	b := setup(t, setupOptions{environ: []string{"IT_MODEL_KEY=" + egressCanary}, configure: func(c *config.Config) {
		c.Patch.Command.Run = agent
		c.Patch.Command.Network = config.NetworkAllowlist
		c.Patch.Command.Egress = []string{modelHost}
		c.Patch.Command.Credentials = []config.CredentialConfig{{Host: modelHost, Header: "X-Api-Key",
			SecretEnv: "IT_MODEL_KEY", BaseURLEnv: "MODEL_BASE_URL", Scheme: "http"}}
		c.Patch.Repositories = []config.RepositoryConfig{{Repository: repo}}
	}})
	id := uniqueID("egress")
	b.create(t, id, func(o *domain.Objective) {
		o.Repository, o.BaseBranch, o.Generator = repo, "main", config.GeneratorCommand
	})
	b.waitStep(t, id, workflows.StepAwaitingApproval)
	_, err := b.starter.Decide(context.Background(), id, workflows.Approve, workflows.Decision{By: "tester"})
	require.NoError(t, err)
	b.waitStep(t, id, workflows.StepDone)

	ctx := context.Background()
	wos, err := b.store.ListWorkOrders(ctx, store.ListWorkOrdersParams{ObjectiveID: id})
	require.NoError(t, err)
	bundle, err := b.store.GetOutputBundle(ctx, wos[0].WorkOrderID)
	require.NoError(t, err)
	require.Contains(t, bundle.Content, "+the model says hello", "the agent reached its model through the proxy")
	require.Contains(t, bundle.Content, "+403", "and was refused another host")
	require.Contains(t, bundle.Content, "+env 0 proc 0", "the key was never in the agent's environment or processes")
	require.Contains(t, bundle.Notes, "egress refused (not in the run's allowlist; add a host the run needs to its egress): "+
		otherHost+" (1)")
	mu.Lock()
	require.Equal(t, []string{egressCanary}, keys, "the model got the key the proxy added")
	mu.Unlock()

	// No record holds the key.
	var records strings.Builder
	o, err := b.store.GetObjective(ctx, id)
	require.NoError(t, err)
	fmt.Fprintf(&records, "%+v", o)
	events, err := b.store.ListEvents(ctx, store.ListEventsParams{SubjectID: id})
	require.NoError(t, err)
	for _, e := range events {
		fmt.Fprintf(&records, "%+v", e)
	}
	rr, err := b.store.GetRunRecord(ctx, wos[0].WorkOrderID)
	require.NoError(t, err)
	fmt.Fprintf(&records, "%+v %+v", rr, bundle)
	pauses, err := b.store.ListPauseStates(ctx, id)
	require.NoError(t, err)
	for _, p := range pauses {
		fmt.Fprintf(&records, "%+v", p)
	}
	require.NotContains(t, records.String(), egressCanary)
	b.requireAuditClean(t)
}
