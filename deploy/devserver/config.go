package devserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/membership/static"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"
	"google.golang.org/protobuf/types/known/durationpb"
)

// storeName names the single SQLite store used for both execution and
// visibility data.
const storeName = "sqlite"

// serverOptions builds everything temporal.NewServer needs for a single-node
// server: all default services in this process, each on its own port.
func serverOptions(ctx context.Context, o Options, logger serverLogger) ([]temporal.ServerOption, error) {
	sqlConf, err := sqliteConfig(ctx, o)
	if err != nil {
		return nil, err
	}
	conf, hosts, err := SingleNodeConfig(o.Host, o.GRPCPort, o.ClusterName, config.Persistence{
		DefaultStore:     storeName,
		VisibilityStore:  storeName,
		NumHistoryShards: 1,
		DataStores:       map[string]config.DataStore{storeName: {SQL: sqlConf}},
	})
	if err != nil {
		return nil, err
	}
	return []temporal.ServerOption{
		temporal.WithConfig(conf),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithStaticHosts(hosts),
		temporal.WithLogger(logger),
		temporal.WithDynamicConfigClient(dynamicConfig()),
	}, nil
}

// SingleNodeConfig is the configuration of a one-node cluster named
// clusterName on persistence: every default service in one process, all
// bound to host, the frontend on frontendPort and the others on free ports
// the kernel picks, found through the static hosts returned (pass them to
// temporal.WithStaticHosts). Archival is off. The dev server uses it with
// SQLite; deploy/topology's server with PostgreSQL.
func SingleNodeConfig(host string, frontendPort int, clusterName string, persistence config.Persistence) (
	*config.Config, map[primitives.ServiceName]static.Hosts, error) {
	frontend := net.JoinHostPort(host, strconv.Itoa(frontendPort))
	internal, err := freePorts(host, 3)
	if err != nil {
		return nil, nil, err
	}
	ports := map[primitives.ServiceName]int{
		primitives.FrontendService: frontendPort,
		primitives.HistoryService:  internal[0],
		primitives.MatchingService: internal[1],
		primitives.WorkerService:   internal[2],
	}
	services := map[string]config.Service{}
	hosts := map[primitives.ServiceName]static.Hosts{}
	for name, port := range ports {
		services[string(name)] = config.Service{RPC: config.RPC{GRPCPort: port, BindOnIP: host}}
		hosts[name] = static.SingleLocalHost(net.JoinHostPort(host, strconv.Itoa(port)))
	}

	conf := &config.Config{
		Persistence: persistence,
		ClusterMetadata: &cluster.Config{
			FailoverVersionIncrement: 10,
			MasterClusterName:        clusterName,
			CurrentClusterName:       clusterName,
			ClusterInformation: map[string]cluster.ClusterInformation{
				clusterName: {Enabled: true, InitialFailoverVersion: 1, RPCAddress: frontend},
			},
		},
		DCRedirectionPolicy: config.DCRedirectionPolicy{Policy: "noop"},
		Services:            services,
		PublicClient:        config.PublicClient{HostPort: frontend},
	}
	conf.Archival.History.State = "disabled"
	conf.Archival.Visibility.State = "disabled"
	conf.NamespaceDefaults.Archival.History.State = "disabled"
	conf.NamespaceDefaults.Archival.Visibility.State = "disabled"
	return conf, hosts, nil
}

// NewServerLogger adapts l to the Temporal server's logger, as the dev
// server passes its own logs on.
func NewServerLogger(l *slog.Logger) log.Logger { return serverLogger{l: l} }

// dynamicConfig holds the settings that make a single-node server responsive
// for development; everything else keeps the server's defaults.
func dynamicConfig() dynamicconfig.StaticClient {
	return dynamicconfig.StaticClient{
		// Workflow Update is on by default in v1.32; azolla depends on it, so
		// a future default change must not switch it off silently.
		dynamicconfig.FrontendEnableUpdateWorkflowExecution.Key(): true,
		// azolla's runs carry their repository as a fairness key: the next
		// free run slot goes to the repository with the fewest dispatched
		// lately, not to the one with the longest queue (priority keys, the
		// objectives' urgency, need nothing: v1.32's matcher takes them).
		dynamicconfig.MatchingEnableFairness.Key(): true,
		// One partition per task queue: on one node more buy nothing, and
		// with several a poller may take a task of one partition while a
		// more urgent one waits in another.
		dynamicconfig.MatchingNumTaskqueueReadPartitions.Key():  1,
		dynamicconfig.MatchingNumTaskqueueWritePartitions.Key(): 1,
		// Read custom search attributes (namespace aliases under SQL
		// visibility) from the database on every use, so ones added while
		// the server runs (temporal operator search-attribute create) are
		// usable at once instead of after a cache refresh. Start's own are
		// written before the server starts and need no refresh.
		dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key(): true,
		// Those reads cost persistence calls; raise the per-host limits
		// (keeping the defaults' 2:9 ratio) so they are not throttled.
		dynamicconfig.FrontendPersistenceMaxQPS.Key(): 10000,
		dynamicconfig.HistoryPersistenceMaxQPS.Key():  45000,
		// The Web UI polls visibility; the default of 10 rps throttles it.
		dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 100,
		// The mutable-state cache (128k entries by default) holds every
		// lifecycle touched, waiting ones too, and the forced collection
		// every two minutes marks it all, so its size is idle CPU when many
		// objectives wait. Below the number of lifecycles running at once it
		// thrashes, reloading each from the database: 2,048 holds the
		// thousand that BenchmarkScale approves at once.
		dynamicconfig.HistoryCacheHostLevelMaxSize.Key(): 2048,
		// Each of the four services re-reads every namespace on this
		// interval (2 s by default): a fifth of the idle process's CPU. A
		// namespace it has not seen is read through on first use, so a new
		// one works at once; a changed one shows within the interval.
		dynamicconfig.NamespaceCacheRefreshInterval.Key(): 10 * time.Second,
		// Matching checks its Nexus endpoints against the database every 10
		// s; on one node every change goes through it anyway.
		dynamicconfig.MatchingNexusEndpointsRefreshInterval.Key(): time.Minute,
		// The server's Stop does not stop the SDK workers of the scanners and
		// of the parent-close-policy processor (v1.32 has TODOs saying so).
		// They would outlive Stop and keep polling the frontend address,
		// including that of the next server started on the same port. The
		// scanners only clean up storage, and without the processor the
		// history service applies parent close policies itself.
		dynamicconfig.TaskQueueScannerEnabled.Key():       false,
		dynamicconfig.HistoryScannerEnabled.Key():         false,
		dynamicconfig.EnableParentClosePolicyWorker.Key(): false,
	}
}

// sqliteConfig returns the SQLite store config. A new database file gets its
// schema here; an existing one is reused as it is. The namespace is inserted
// directly when missing, and given its search attributes, before the server
// starts, so both exist from the server's first moment with no registration
// call to make and wait for.
func sqliteConfig(ctx context.Context, o Options) (*config.SQL, error) {
	conf := &config.SQL{PluginName: sqliteplugin.PluginName}
	if o.Ephemeral {
		// The plugin creates the schema itself for in-memory databases. The
		// name only has to be unique within the process.
		conf.DatabaseName = fmt.Sprintf("azolla-dev-%d", rand.Uint64())
		conf.ConnectAttributes = map[string]string{"mode": "memory", "cache": "shared"}
	} else {
		conf.DatabaseName = o.DBPath
		conf.ConnectAttributes = map[string]string{"mode": "rwc"}
		if err := setupSchemaIfNew(conf); err != nil {
			return nil, err
		}
	}

	ns, err := sqliteschema.NewNamespaceConfig(o.ClusterName, o.Namespace, false, nil)
	if err != nil {
		return nil, fmt.Errorf("build namespace %q: %w", o.Namespace, err)
	}
	ns.Detail.Config.Retention = durationpb.New(o.Retention)
	if err := sqliteschema.CreateNamespaces(conf, ns); err != nil {
		return nil, fmt.Errorf("create namespace %q: %w", o.Namespace, err)
	}
	if err := mapSearchAttributes(ctx, conf, o.ClusterName, o.Namespace, o.SearchAttributes); err != nil {
		return nil, err
	}
	return conf, nil
}

func setupSchemaIfNew(conf *config.SQL) error {
	path := conf.DatabaseName
	if _, err := os.Stat(path); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("check database file: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create database directory: %w", err)
	}
	if err := sqliteschema.SetupSchema(conf); err != nil {
		// Not removed here: the plugin keeps its connection to the file for
		// the life of the process. A half-initialised file must be deleted
		// by hand, as it would otherwise be taken as existing next time.
		return fmt.Errorf("set up schema in %s (delete the file before retrying): %w", path, err)
	}
	return nil
}
