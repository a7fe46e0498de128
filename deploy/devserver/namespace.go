package devserver

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	persistencespb "go.temporal.io/server/api/persistence/v1"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/metrics"
	"go.temporal.io/server/common/persistence"
	"go.temporal.io/server/common/persistence/serialization"
	"go.temporal.io/server/common/persistence/sql"
	"go.temporal.io/server/common/resolver"
	"go.temporal.io/server/common/searchattribute/sadefs"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// mapSearchAttributes gives the namespace, in the database and before the
// server starts, an alias for every wanted custom search attribute it lacks.
// Registered through the running server instead (AddSearchAttributes), they
// would leave a window in which the frontend already accepts workflow starts
// but refuses those that set them ("Namespace default has no mapping defined
// for search attribute AzollaObjectiveId"); written first, they are there
// from the server's first answer. This is the server's own update (the
// metadata manager, with its notification version), made while nothing else
// uses the database. Attributes mapped with the same type are left alone,
// so starting again on the same database succeeds; one mapped with another
// type is an error.
func mapSearchAttributes(ctx context.Context, conf *config.SQL, clusterName, namespace string, want map[string]enums.IndexedValueType) error {
	if len(want) == 0 {
		return nil
	}
	for name := range want {
		if sadefs.IsReserved(name) {
			return fmt.Errorf("search attribute %s: name is reserved by Temporal", name)
		}
	}
	serializer := serialization.NewSerializer()
	// Closing the factory closes nothing the server needs: the SQLite plugin
	// keeps one connection per database for the life of the process, which
	// is also what keeps an ephemeral database alive.
	factory := sql.NewFactory(*conf, resolver.NewNoopResolver(), clusterName, log.NewNoopLogger(),
		metrics.NoopMetricsHandler, serializer)
	defer factory.Close()
	store, err := factory.NewMetadataStore()
	if err != nil {
		return fmt.Errorf("open namespace metadata: %w", err)
	}
	meta := persistence.NewMetadataManagerImpl(store, serializer, log.NewNoopLogger(), clusterName)
	defer meta.Close()

	// The notification version is read before the namespace, as the
	// server's namespace handler does: the update is conditional on it.
	version, err := meta.GetMetadata(ctx)
	if err != nil {
		return fmt.Errorf("read namespace metadata: %w", err)
	}
	ns, err := meta.GetNamespace(ctx, &persistence.GetNamespaceRequest{Name: namespace})
	if err != nil {
		return fmt.Errorf("read namespace %q: %w", namespace, err)
	}
	if ns.Namespace.Config == nil {
		ns.Namespace.Config = &persistencespb.NamespaceConfig{}
	}
	aliases := ns.Namespace.Config.CustomSearchAttributeAliases // field name -> attribute name
	added, err := assignFields(namespace, aliases, want)
	if err != nil {
		return err
	}
	if len(added) == 0 {
		return nil
	}
	if aliases == nil {
		aliases = map[string]string{}
	}
	maps.Copy(aliases, added)
	ns.Namespace.Config.CustomSearchAttributeAliases = aliases
	ns.Namespace.ConfigVersion++
	err = meta.UpdateNamespace(ctx, &persistence.UpdateNamespaceRequest{
		Namespace:           ns.Namespace,
		IsGlobalNamespace:   ns.IsGlobalNamespace,
		NotificationVersion: version.NotificationVersion,
	})
	if err != nil {
		return fmt.Errorf("add search attributes to %q: %w", namespace, err)
	}
	return nil
}

// assignFields picks, for each wanted attribute that aliases (field name ->
// attribute name) lacks, the first free preallocated field of its type,
// which is what the server's AddSearchAttributes does for SQL visibility.
// It returns the new field -> attribute entries.
func assignFields(namespace string, aliases map[string]string, want map[string]enums.IndexedValueType) (map[string]string, error) {
	fieldTypes := sadefs.GetDBIndexSearchAttributes(nil).CustomSearchAttributes
	mapped := map[string]string{} // attribute name -> field name
	for field, name := range aliases {
		mapped[name] = field
	}
	added := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		typ := want[name]
		if field, ok := mapped[name]; ok {
			if have := fieldTypes[field]; have != typ {
				return nil, fmt.Errorf("search attribute %s exists in %q as %s, want %s", name, namespace, have, typ)
			}
			continue
		}
		field := ""
		for _, f := range slices.Sorted(maps.Keys(fieldTypes)) {
			_, taken := aliases[f]
			_, takenNow := added[f]
			if fieldTypes[f] == typ && sadefs.IsPreallocatedCSAFieldName(f, typ) && !taken && !takenNow {
				field = f
				break
			}
		}
		if field == "" {
			return nil, fmt.Errorf("search attribute %s: no %s field left in %q", name, typ, namespace)
		}
		added[field] = name
	}
	return added, nil
}

// waitUntilUsable returns once the frontend serves the namespace and
// resolves every wanted search attribute in it, which is what a workflow
// start that sets them needs. The server's Start returns before every
// service answers, so this is polled. Attributes are checked with a count
// query that names them all: it resolves each name through the same
// namespace mapping as a start does, and unlike a trial start it leaves
// nothing behind.
func waitUntilUsable(ctx context.Context, frontend, namespace string, want map[string]enums.IndexedValueType) error {
	conn, err := grpc.NewClient(frontend, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("connect to frontend %s: %w", frontend, err)
	}
	defer conn.Close()
	ws := workflowservice.NewWorkflowServiceClient(conn)

	var terms []string
	for _, name := range slices.Sorted(maps.Keys(want)) {
		terms = append(terms, name+" IS NULL")
	}
	query := strings.Join(terms, " AND ")
	check := func(ctx context.Context) error {
		if _, err := ws.DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: namespace}); err != nil {
			return fmt.Errorf("describe namespace: %w", err)
		}
		if query == "" {
			return nil
		}
		_, err := ws.CountWorkflowExecutions(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: namespace, Query: query})
		if err != nil {
			return fmt.Errorf("query its search attributes: %w", err)
		}
		return nil
	}
	for {
		attempt, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := check(attempt)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for namespace %q to be usable: %w (last error: %w)", namespace, ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
