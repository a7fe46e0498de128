package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/starter"
	"github.com/azolla/azolla/workflows"
)

// setupPollInterval is how often `temporal setup` asks again while a new
// namespace is not usable yet.
const setupPollInterval = 250 * time.Millisecond

// How `temporal setup` waits for a cluster that is not healthy yet: each
// probe (a dial and a health check) is bounded by healthProbeTimeout, the
// pause between probes doubles from healthFirstPause up to healthMaxPause,
// and a wait that keeps failing the same way is reported again every
// healthReportEvery.
const (
	healthProbeTimeout = 5 * time.Second
	healthFirstPause   = 250 * time.Millisecond
	healthMaxPause     = 5 * time.Second
	healthReportEvery  = 15 * time.Second
)

func (a *app) temporalCmd() *cobra.Command {
	return groupCmd("temporal", "Prepare a Temporal cluster for azolla", a.temporalSetupCmd())
}

func (a *app) temporalSetupCmd() *cobra.Command {
	var retention, wait, healthTimeout time.Duration
	cmd := &cobra.Command{
		Use:   "setup",
		Short: "Create the namespace and register azolla's search attributes",
		Long: `Wait until the cluster at temporal.address answers its health check
SERVING (a cluster still starting is asked again, with backoff, for up to
--health-timeout; each wait is reported on stderr). Then create the
namespace temporal.namespace when it does not exist (with --retention; an
existing namespace is left as it is), wait until it is usable, and
register every search attribute azolla's workflows set that the namespace
lacks, through Temporal's Operator API. Running it again changes nothing.
An attribute registered with another type is an error: azolla cannot use
it.

azolla dev does this for its embedded server; azolla worker refuses to
start on a namespace without the attributes.`,
		Args: cobra.NoArgs,
	}
	cmd.Flags().DurationVar(&retention, "retention", 72*time.Hour, "how long a new namespace keeps closed workflows")
	cmd.Flags().DurationVar(&wait, "wait", time.Minute, "how long to wait for a new namespace to be usable")
	cmd.Flags().DurationVar(&healthTimeout, "health-timeout", 2*time.Minute,
		"how long to wait for the cluster to answer its health check SERVING")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if retention <= 0 {
			return usageError(fmt.Errorf("--retention must be positive, got %s", retention))
		}
		if healthTimeout <= 0 {
			return usageError(fmt.Errorf("--health-timeout must be positive, got %s", healthTimeout))
		}
		cfg, err := a.loadConfig(cmd.Flags())
		if err != nil {
			return err
		}
		c, err := awaitHealthy(cmd.Context(), cfg.Temporal, cfg.LoggerAtLeast(a.stderr, slog.LevelWarn), healthTimeout, a.stderr)
		if err != nil {
			return err
		}
		defer c.Close()
		r, err := setupTemporal(cmd.Context(), c.WorkflowService(), c.OperatorService(), setupRequest{
			Namespace: cfg.Temporal.Namespace, Retention: retention, Wait: wait})
		if err != nil {
			return err
		}
		r.print(a.stdout)
		return nil
	}
	return cmd
}

// awaitHealthy dials the frontend at cfg.Address and asks its gRPC health
// check until it answers SERVING, for up to timeout, and returns the
// client. A cluster on its first start accepts connections a while before
// its frontend serves (it waits for cluster membership), so an open port,
// all the compose healthcheck sees, is not enough (docs/compose.md). A
// refusal of the credentials or a TLS handshake that fails on a
// certificate (starter.Misconfigured) ends the wait at once; every other
// failure is retried, as a cluster still starting fails in all the other
// ways, with the reason reported on w while waiting and in the error.
func awaitHealthy(ctx context.Context, cfg config.TemporalConfig, log *slog.Logger, timeout time.Duration,
	w io.Writer) (client.Client, error) {
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	pause := healthFirstPause
	var reported string
	var reportedAt time.Time
	for {
		c, err := probeHealth(wctx, cfg, log)
		if err == nil {
			if reported != "" {
				fmt.Fprintf(w, "Temporal at %s is healthy (after %s)\n", cfg.Address, time.Since(start).Round(time.Second))
			}
			return c, nil
		}
		if refused(err) {
			return nil, unavailableError(err)
		}
		if starter.Misconfigured(err) || starter.PlaintextToTLS(ctx, cfg, err) {
			return nil, configError(err)
		}
		if wctx.Err() == nil {
			if msg := err.Error(); msg != reported || time.Since(reportedAt) >= healthReportEvery {
				fmt.Fprintf(w, "waiting for Temporal at %s to be healthy (%s of --health-timeout %s): %v\n",
					cfg.Address, time.Since(start).Round(time.Second), timeout, err)
				reported, reportedAt = msg, time.Now()
			}
			t := time.NewTimer(pause)
			select {
			case <-wctx.Done():
				t.Stop()
			case <-t.C:
				pause = min(2*pause, healthMaxPause)
				continue
			}
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, unavailableError(fmt.Errorf("wait for Temporal at %s to be healthy: gave up after %s (--health-timeout): %w",
			cfg.Address, timeout, err))
	}
}

// probeHealth dials the frontend once and asks its health check; it
// returns the client only when the frontend answers SERVING.
func probeHealth(ctx context.Context, cfg config.TemporalConfig, log *slog.Logger) (client.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, healthProbeTimeout)
	defer cancel()
	c, err := starter.Dial(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
	if err == nil || serviceerror.ToStatus(err).Code() == codes.Unimplemented {
		// Without the health service (a proxy that does not forward it),
		// the frontend's answer to the dial is all there is to go by.
		return c, nil
	}
	c.Close()
	return nil, fmt.Errorf("health check of Temporal at %s: %w", cfg.Address, err)
}

// refused says whether err is the frontend refusing the credentials, which
// a cluster that is starting never answers.
func refused(err error) bool {
	// The SDK turns statuses into serviceerrors, except Unauthenticated,
	// which it leaves a status; ToStatus reads either.
	code := serviceerror.ToStatus(err).Code()
	return code == codes.Unauthenticated || code == codes.PermissionDenied
}

// setupRequest is what `temporal setup` makes sure of.
type setupRequest struct {
	Namespace string
	// Retention applies to a namespace setup creates.
	Retention time.Duration
	// Wait bounds how long a namespace may stay unusable after creation.
	Wait time.Duration
}

// setupResult is what `temporal setup` found and did.
type setupResult struct {
	namespace string
	created   bool
	retention time.Duration
	// added are the attributes registered by this run, present those that
	// were there already.
	added, present []string
}

func (r setupResult) print(w io.Writer) {
	if r.created {
		fmt.Fprintf(w, "namespace %s created (retention %s)\n", r.namespace, r.retention)
	} else {
		fmt.Fprintf(w, "namespace %s exists (retention %s)\n", r.namespace, r.retention)
	}
	if len(r.added) > 0 {
		fmt.Fprintf(w, "%d search attributes added: %s\n", len(r.added), strings.Join(r.added, ", "))
	}
	if len(r.present) > 0 {
		fmt.Fprintf(w, "%d search attributes present\n", len(r.present))
	}
}

// setupTemporal creates req.Namespace when missing and registers every
// search attribute of workflows.SearchAttributes it lacks.
func setupTemporal(ctx context.Context, ws workflowservice.WorkflowServiceClient, ops operatorservice.OperatorServiceClient,
	req setupRequest) (setupResult, error) {
	r := setupResult{namespace: req.Namespace}
	desc, err := ws.DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: req.Namespace})
	switch {
	case err == nil:
		r.retention = desc.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration()
	case isNamespaceNotFound(err):
		_, err = ws.RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{Namespace: req.Namespace,
			WorkflowExecutionRetentionPeriod: durationpb.New(req.Retention)})
		switch {
		case err == nil:
			r.created, r.retention = true, req.Retention
		case isNamespaceAlreadyExists(err):
			// Another setup created it in between: it exists, with the
			// retention that one asked for.
			if desc, err := ws.DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: req.Namespace}); err == nil {
				r.retention = desc.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration()
			}
		default:
			return r, fmt.Errorf("create namespace %s: %w", req.Namespace, err)
		}
	default:
		return r, unavailableError(fmt.Errorf("describe namespace %s: %w", req.Namespace, err))
	}

	// A new namespace reaches the frontend's cache a few seconds after it is
	// written; until then the Operator API does not know it.
	have, err := awaitSearchAttributes(ctx, ops, req.Namespace, req.Wait)
	if err != nil {
		return r, err
	}
	gaps := findGaps(have)
	if err := gaps.conflictError(req.Namespace); err != nil {
		return r, err
	}
	r.present = gaps.present
	if len(gaps.missing) == 0 {
		return r, nil
	}
	want, add := wantedSearchAttributes(), map[string]enumspb.IndexedValueType{}
	for _, name := range gaps.missing {
		add[name] = want[name]
	}
	if _, err := ops.AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace: req.Namespace, SearchAttributes: add}); err != nil {
		if noSlotLeft(err) {
			return r, configError(fmt.Errorf("register search attributes %s in namespace %s: the namespace has no "+
				"free slot of their type left (a SQL visibility store offers 10 Keyword attributes per namespace, "+
				"and azolla uses %d of them): remove an attribute nothing uses, or give azolla a namespace of its own: %w",
				strings.Join(gaps.missing, ", "), req.Namespace, keywordCount(), err))
		}
		return r, fmt.Errorf("register search attributes %s in namespace %s: %w",
			strings.Join(gaps.missing, ", "), req.Namespace, err)
	}
	r.added = gaps.missing
	return r, nil
}

// awaitSearchAttributes lists the namespace's custom search attributes,
// asking again while the namespace is not found, for up to wait.
func awaitSearchAttributes(ctx context.Context, ops operatorservice.OperatorServiceClient, namespace string,
	wait time.Duration) (map[string]enumspb.IndexedValueType, error) {
	deadline := time.Now().Add(wait)
	for {
		have, err := listSearchAttributes(ctx, ops, namespace)
		if err == nil || !isNamespaceNotFound(err) {
			return have, err
		}
		if time.Now().After(deadline) {
			return nil, unavailableError(fmt.Errorf("namespace %s is still not usable after %s (is it being deleted?): %w",
				namespace, wait, err))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(setupPollInterval):
		}
	}
}

func listSearchAttributes(ctx context.Context, ops operatorservice.OperatorServiceClient, namespace string) (map[string]enumspb.IndexedValueType, error) {
	resp, err := ops.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return nil, fmt.Errorf("list the search attributes of namespace %s: %w", namespace, err)
	}
	return resp.GetCustomAttributes(), nil
}

// isNamespaceNotFound says whether err is the frontend's answer for a
// namespace it does not know (yet): DescribeNamespace answers NotFound, the
// APIs that go through its namespace cache NamespaceNotFound.
func isNamespaceNotFound(err error) bool {
	var nf *serviceerror.NotFound
	var nnf *serviceerror.NamespaceNotFound
	if errors.As(err, &nf) || errors.As(err, &nnf) {
		return true
	}
	// The SDK's raw service clients return gRPC statuses, not serviceerrors.
	st, ok := status.FromError(err)
	if !ok {
		return false
	}
	switch serviceerror.FromStatus(st).(type) {
	case *serviceerror.NotFound, *serviceerror.NamespaceNotFound:
		return true
	}
	return false
}

func isNamespaceAlreadyExists(err error) bool {
	st, ok := status.FromError(err)
	if !ok {
		return false
	}
	_, exists := serviceerror.FromStatus(st).(*serviceerror.NamespaceAlreadyExists)
	return exists
}

// wantedSearchAttributes are azolla's search attributes by name, with
// their types.
func wantedSearchAttributes() map[string]enumspb.IndexedValueType {
	want := map[string]enumspb.IndexedValueType{}
	for _, k := range workflows.SearchAttributes() {
		want[k.GetName()] = k.GetValueType()
	}
	return want
}

// attributeGaps sets a namespace's custom search attributes against
// azolla's, each list sorted by name.
type attributeGaps struct {
	present, missing []string
	// conflicts are registered with another type than azolla sets.
	conflicts []string
	have      map[string]enumspb.IndexedValueType
}

func findGaps(have map[string]enumspb.IndexedValueType) attributeGaps {
	g := attributeGaps{have: have}
	want := wantedSearchAttributes()
	for _, name := range slices.Sorted(maps.Keys(want)) {
		t, ok := have[name]
		switch {
		case !ok:
			g.missing = append(g.missing, name)
		case t != want[name]:
			g.conflicts = append(g.conflicts, name)
		default:
			g.present = append(g.present, name)
		}
	}
	return g
}

// conflictError is the configuration error of a namespace with
// conflicting attributes, nil when there are none.
func (g attributeGaps) conflictError(namespace string) error {
	if len(g.conflicts) == 0 {
		return nil
	}
	want := wantedSearchAttributes()
	parts := make([]string, len(g.conflicts))
	for i, name := range g.conflicts {
		parts[i] = fmt.Sprintf("search attribute %s is a %s, azolla sets a %s", name, typeName(g.have[name]), typeName(want[name]))
	}
	return configError(fmt.Errorf("namespace %s: %s; azolla cannot use them: remove them or use another namespace",
		namespace, strings.Join(parts, "; ")))
}

// typeName is a search attribute type as the temporal CLI spells it
// (Keyword, Bool).
func typeName(t enumspb.IndexedValueType) string { return t.String() }

// checkSearchAttributes refuses a namespace that lacks one of azolla's
// search attributes, or has one with another type: a lifecycle there would
// stall on its first upsert. An answer that says nothing either way (an
// Operator API the credentials may not use) is only a warning.
func checkSearchAttributes(ctx context.Context, ops operatorservice.OperatorServiceClient, namespace, self string, log *slog.Logger) error {
	have, err := listSearchAttributes(ctx, ops, namespace)
	if isNamespaceNotFound(err) {
		return configError(fmt.Errorf("namespace %s does not exist: run `%s temporal setup --namespace %s`", namespace, self, namespace))
	}
	if err != nil {
		log.Warn("could not check the namespace's search attributes", "namespace", namespace, "error", err)
		return nil
	}
	g := findGaps(have)
	if err := g.conflictError(namespace); err != nil {
		return err
	}
	if len(g.missing) > 0 {
		return configError(fmt.Errorf("namespace %s lacks azolla's search attributes %s: run `%s temporal setup --namespace %s`",
			namespace, strings.Join(g.missing, ", "), self, namespace))
	}
	return nil
}

// noSlotLeft says whether the server refused to add search attributes
// because the namespace has as many of that type as its visibility store
// allows (its message: "cannot have more than N search attribute of type
// Keyword").
func noSlotLeft(err error) bool {
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "more than") && strings.Contains(msg, "search attribute")
}

// keywordCount is how many Keyword attributes azolla registers.
func keywordCount() int {
	n := 0
	for _, t := range wantedSearchAttributes() {
		if t == enumspb.INDEXED_VALUE_TYPE_KEYWORD {
			n++
		}
	}
	return n
}
