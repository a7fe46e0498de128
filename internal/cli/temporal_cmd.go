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
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/azolla/azolla/starter"
	"github.com/azolla/azolla/workflows"
)

// setupPollInterval is how often `temporal setup` asks again while a new
// namespace is not usable yet.
const setupPollInterval = 250 * time.Millisecond

func (a *app) temporalCmd() *cobra.Command {
	return groupCmd("temporal", "Prepare a Temporal cluster for azolla", a.temporalSetupCmd())
}

func (a *app) temporalSetupCmd() *cobra.Command {
	var retention, wait time.Duration
	cmd := &cobra.Command{
		Use:   "setup",
		Short: "Create the namespace and register azolla's search attributes",
		Long: `Create the namespace temporal.namespace on the cluster at temporal.address
when it does not exist (with --retention; an existing namespace is left as
it is), wait until it is usable, then register every search attribute
azolla's workflows set that the namespace lacks, through Temporal's
Operator API. Running it again changes nothing. An attribute registered
with another type is an error: azolla cannot use it.

azolla dev does this for its embedded server; azolla worker refuses to
start on a namespace without the attributes.`,
		Args: cobra.NoArgs,
	}
	cmd.Flags().DurationVar(&retention, "retention", 72*time.Hour, "how long a new namespace keeps closed workflows")
	cmd.Flags().DurationVar(&wait, "wait", time.Minute, "how long to wait for a new namespace to be usable")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if retention <= 0 {
			return usageError(fmt.Errorf("--retention must be positive, got %s", retention))
		}
		cfg, err := a.loadConfig(cmd.Flags())
		if err != nil {
			return err
		}
		c, err := starter.Dial(cmd.Context(), cfg.Temporal, cfg.LoggerAtLeast(a.stderr, slog.LevelWarn))
		if err != nil {
			return unavailableError(err)
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
