// Command temporalserver is a Temporal server (go.temporal.io/server, the
// version docker-compose.yml runs) on PostgreSQL, configured like the
// compose file's temporal and temporal-schema services, for proving the
// production topology without Docker (make test-topology). It is built only
// by that test: nothing else imports it.
//
//	temporalserver schema   creates the two databases when missing and puts
//	                        Temporal's schema in them, or brings it up to this
//	                        version (what temporal-schema.sh does with
//	                        temporal-sql-tool), from SQL_PLUGIN, SQL_HOST,
//	                        SQL_PORT, SQL_USER, SQL_PASSWORD, DBNAME and
//	                        VISIBILITY_DBNAME.
//	temporalserver start    runs every service in this process until SIGTERM
//	                        or SIGINT, from the variables the
//	                        temporalio/server image reads: DB, DB_PORT,
//	                        POSTGRES_SEEDS, POSTGRES_USER, POSTGRES_PWD,
//	                        DBNAME, VISIBILITY_DBNAME, NUM_HISTORY_SHARDS,
//	                        BIND_ON_IP, FRONTEND_GRPC_PORT, PPROF_PORT and
//	                        DYNAMIC_CONFIG_FILE_PATH; and the frontend TLS
//	                        variables (see frontendTLS).
//
// Only the defaults of the image's configuration template that azolla's
// compose file relies on are mirrored: one node, one cluster named active,
// archival off, frontend TLS only. TEMPORALSERVER_API_KEY, not a variable of
// the image, puts an API-key check in front of the frontend for the TLS
// tests (see apiKeyInterceptor).
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/membership/static"
	_ "go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql" // the postgres12 plugins
	"go.temporal.io/server/common/primitives"
	dbschemas "go.temporal.io/server/schema"
	"go.temporal.io/server/temporal"
	schematool "go.temporal.io/server/tools/common/schema"
	sqltool "go.temporal.io/server/tools/sql"

	"github.com/azolla/azolla/deploy/devserver"
)

const (
	defaultStore    = "default"
	visibilityStore = "visibility"
	clusterName     = "active"
)

func main() {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel()}))
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: temporalserver schema|start")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "schema":
		err = setupSchema(devserver.NewServerLogger(logger))
	case "start":
		err = run(logger)
	default:
		err = fmt.Errorf("unknown command %q: want schema or start", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "temporalserver:", err)
		os.Exit(1)
	}
}

// logLevel is TEMPORAL_LOG_LEVEL (debug, info, warn, error); default warn.
func logLevel() slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(env("TEMPORAL_LOG_LEVEL", "warn"))); err != nil {
		return slog.LevelWarn
	}
	return l
}

func env(key, def string) string {
	if v, ok := os.LookupEnv(key); ok && v != "" {
		return v
	}
	return def
}

// databases are Temporal's two databases, by schema: DBNAME and
// VISIBILITY_DBNAME with the image's defaults.
func databases() map[string]string {
	return map[string]string{
		"postgresql/v12/temporal":   env("DBNAME", "temporal"),
		"postgresql/v12/visibility": env("VISIBILITY_DBNAME", "temporal_visibility"),
	}
}

// setupSchema is temporal-schema.sh as a library call: per database,
// setup-schema --version 0.0 (the version tables, when missing), then
// update-schema --schema-name postgresql/v12/<db> (every version not yet
// applied), from the schema files embedded in the server module.
func setupSchema(logger log.Logger) error {
	plugin := env("SQL_PLUGIN", "postgres12")
	if !strings.HasPrefix(plugin, "postgres12") {
		return fmt.Errorf("SQL_PLUGIN %q: only postgres12 and postgres12_pgx are supported", plugin)
	}
	for schemaName, db := range databases() {
		if !contains(dbschemas.PathsByDB("sql"), schemaName) {
			return fmt.Errorf("schema %s is not embedded in this server version", schemaName)
		}
		cfg := &config.SQL{
			PluginName:      plugin,
			ConnectAddr:     net.JoinHostPort(env("SQL_HOST", "127.0.0.1"), env("SQL_PORT", "5432")),
			ConnectProtocol: "tcp",
			User:            env("SQL_USER", ""),
			Password:        os.Getenv("SQL_PASSWORD"),
			DatabaseName:    db,
		}
		conn, err := sqltool.NewConnection(cfg, logger)
		if err != nil && strings.Contains(err.Error(), "does not exist") {
			// As temporal-sql-tool create-database: through the server's
			// default database, as the same user.
			create := *cfg
			if err := sqltool.DoCreateDatabase(&create, "postgres", logger); err != nil {
				return fmt.Errorf("create database %s: %w", db, err)
			}
			conn, err = sqltool.NewConnection(cfg, logger)
		}
		if err != nil {
			return fmt.Errorf("connect to database %s: %w", db, err)
		}
		err = schematool.NewSetupSchemaTask(conn, &schematool.SetupConfig{InitialVersion: "0.0"}, logger).Run()
		if err == nil {
			err = schematool.NewUpdateSchemaTask(conn, &schematool.UpdateConfig{SchemaName: schemaName}, logger).Run()
		}
		conn.Close()
		if err != nil {
			return fmt.Errorf("schema %s in database %s: %w", schemaName, db, err)
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// serverConfig reads the temporalio/server image's variables into a
// single-node configuration on two PostgreSQL stores.
func serverConfig() (*config.Config, map[primitives.ServiceName]static.Hosts, error) {
	plugin := env("DB", "postgres12")
	if !strings.HasPrefix(plugin, "postgres12") {
		return nil, nil, fmt.Errorf("DB %q: only postgres12 and postgres12_pgx are supported", plugin)
	}
	shards, err := strconv.Atoi(env("NUM_HISTORY_SHARDS", "4"))
	if err != nil || shards < 1 {
		return nil, nil, fmt.Errorf("NUM_HISTORY_SHARDS %q: want a positive number", os.Getenv("NUM_HISTORY_SHARDS"))
	}
	port, err := strconv.Atoi(env("FRONTEND_GRPC_PORT", "7233"))
	if err != nil || port < 1 || port > 65535 {
		return nil, nil, fmt.Errorf("FRONTEND_GRPC_PORT %q: want a port", os.Getenv("FRONTEND_GRPC_PORT"))
	}
	host := env("BIND_ON_IP", "127.0.0.1")
	if net.ParseIP(host) == nil {
		return nil, nil, fmt.Errorf("BIND_ON_IP %q: want an IP address", host)
	}
	if host == "0.0.0.0" || host == "::" {
		// Every interface: the static membership then names loopback, the
		// address the other services of this process dial.
		return nil, nil, fmt.Errorf("BIND_ON_IP %s: a single-process server binds one address; use 127.0.0.1", host)
	}
	dbs := databases()
	sqlStore := func(db string) config.DataStore {
		return config.DataStore{SQL: &config.SQL{
			PluginName:      plugin,
			ConnectAddr:     net.JoinHostPort(env("POSTGRES_SEEDS", "127.0.0.1"), env("DB_PORT", "5432")),
			ConnectProtocol: "tcp",
			User:            os.Getenv("POSTGRES_USER"),
			Password:        os.Getenv("POSTGRES_PWD"),
			DatabaseName:    db,
			MaxConns:        20,
			MaxIdleConns:    20,
			MaxConnLifetime: time.Hour,
		}}
	}
	conf, hosts, err := devserver.SingleNodeConfig(host, port, clusterName, config.Persistence{
		DefaultStore:     defaultStore,
		VisibilityStore:  visibilityStore,
		NumHistoryShards: int32(shards),
		DataStores: map[string]config.DataStore{
			defaultStore:    sqlStore(dbs["postgresql/v12/temporal"]),
			visibilityStore: sqlStore(dbs["postgresql/v12/visibility"]),
		},
	})
	if err != nil {
		return nil, nil, err
	}
	if conf.Global.TLS, err = frontendTLS(); err != nil {
		return nil, nil, err
	}
	if v := os.Getenv("PPROF_PORT"); v != "" {
		// The image's variable: the Go runtime's profiles of the whole
		// server on this port of BIND_ON_IP (0, the default, serves none).
		p, err := strconv.Atoi(v)
		if err != nil || p < 0 || p > 65535 {
			return nil, nil, fmt.Errorf("PPROF_PORT %q: want a port", v)
		}
		conf.Global.PProf.Port = p
		conf.Global.PProf.Host = host
	}
	if path := os.Getenv("DYNAMIC_CONFIG_FILE_PATH"); path != "" {
		conf.DynamicConfigClient = &dynamicconfig.FileBasedClientConfig{Filepath: path, PollInterval: 10 * time.Second}
	}
	return conf, hosts, nil
}

// run starts the server and stops it on SIGTERM or SIGINT.
func run(logger *slog.Logger) error {
	conf, hosts, err := serverConfig()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	opts := []temporal.ServerOption{
		temporal.WithConfig(conf),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithStaticHosts(hosts),
		temporal.WithLogger(devserver.NewServerLogger(logger)),
	}
	if key := os.Getenv("TEMPORALSERVER_API_KEY"); key != "" {
		opts = append(opts, temporal.WithChainedFrontendGrpcInterceptors(apiKeyInterceptor(key)))
	}
	s, err := temporal.NewServer(opts...)
	if err != nil {
		return fmt.Errorf("create server: %w", err)
	}
	if err := s.Start(); err != nil {
		return fmt.Errorf("start server: %w", err)
	}
	fmt.Fprintf(os.Stderr, "temporalserver: frontend on %s (TLS %t, client certificates required %t)\n",
		conf.PublicClient.HostPort, conf.Global.TLS.Frontend.Server.CertFile != "", conf.Global.TLS.Frontend.Server.RequireClientAuth)
	<-ctx.Done()
	if err := s.Stop(); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("stop server: %w", err)
	}
	return nil
}
