package topology

import (
	"context"
	"database/sql"
	"net"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	pgschema "go.temporal.io/server/schema/postgresql/v12"

	"github.com/azolla/azolla/internal/remote/controlplane/redisstream/redistest"
)

// redisDB is the Redis logical database the topology tests own: they flush
// it (other packages' tests use 9 and 12).
const redisDB = 13

// cluster is a Temporal server process on fresh PostgreSQL databases, with
// the mapping its processes share.
type cluster struct {
	pg      *postgres
	local   *local
	server  *proc
	client  client.Client
	azolla  string
	started time.Duration // schema and server start, until CheckHealth answers
}

// startCluster builds the binaries, creates the databases, runs the schema
// step as the temporal-schema service and starts the server as the temporal
// service, and returns once the frontend answers CheckHealth.
func startCluster(t testing.TB, remoteDiazotrophs string) *cluster {
	t.Helper()
	return startClusterWith(t, remoteDiazotrophs, nil, client.ConnectionOptions{}, nil)
}

// startClusterWith is startCluster with serverEnv added to the temporal
// service's environment, and the connection options and credentials
// CheckHealth needs to reach a frontend so configured.
func startClusterWith(t testing.TB, remoteDiazotrophs string, serverEnv map[string]string,
	conn client.ConnectionOptions, creds client.Credentials) *cluster {
	t.Helper()
	pg := openPostgres(t)
	redisURL := redistest.URLWithDB(t, redisDB)
	opts, err := redis.ParseURL(redisURL)
	require.NoError(t, err)
	rdb := redis.NewClient(opts)
	require.NoError(t, rdb.FlushDB(context.Background()).Err(), "flush Redis database %d", redisDB)
	_ = rdb.Close()
	serverBin, azollaBin := build(t)
	l := &local{pgHost: pg.host, pgPort: pg.port, dbs: pg.createDatabases(t), temporalPort: freePort(t),
		redisURL: redisURL, controlPlane: net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t))),
		vars: interpolation(remoteDiazotrophs)}
	t.Logf("mapping: %s", l)

	start := time.Now()
	run(t, serverBin, l.env(t, "temporal-schema", "", nil), "schema")
	c := &cluster{pg: pg, local: l, azolla: azollaBin}
	c.startServer(t, serverEnv, conn, creds)
	c.started = time.Since(start)
	return c
}

// startServer starts the server, stopping the one running first, as the
// temporal service with serverEnv added, and waits for its CheckHealth
// through conn and creds.
func (c *cluster) startServer(t testing.TB, serverEnv map[string]string, conn client.ConnectionOptions, creds client.Credentials) {
	t.Helper()
	if c.server != nil {
		c.server.stop()
		c.client.Close()
	}
	serverBin, _ := build(t)
	c.server = startProc(t, "temporal", serverBin, c.local.env(t, "temporal", "", serverEnv), "start")
	c.client = waitHealthy(t, client.Options{HostPort: c.frontend(), ConnectionOptions: conn, Credentials: creds}, c.server)
}

// frontend is the Temporal frontend's host:port.
func (c *cluster) frontend() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(c.local.temporalPort))
}

// schemaVersion is the schema version recorded in database db.
func (c *cluster) schemaVersion(t testing.TB, db string) string {
	t.Helper()
	u := url.URL{Scheme: "postgres", User: url.User("temporal"), Host: net.JoinHostPort(c.pg.host, c.pg.port),
		Path: "/" + db, RawQuery: "sslmode=disable"}
	conn, err := sql.Open("pgx", u.String())
	require.NoError(t, err)
	defer conn.Close()
	var v string
	require.NoError(t, conn.QueryRow(`SELECT curr_version FROM schema_version`).Scan(&v))
	return v
}

// The server main on PostgreSQL: the schema step creates both schemas at
// the server's versions and is a no-op when run again, and the server,
// configured from the compose file's temporal service, answers CheckHealth.
func TestTemporalServer_OnPostgreSQLAnswersCheckHealth(t *testing.T) {
	enabled(t)
	c := startCluster(t, "")
	t.Logf("built in %s; schema and server up in %s", binaries.duration.Round(time.Millisecond), c.started.Round(time.Millisecond))
	require.Equal(t, pgschema.Version, c.schemaVersion(t, c.local.dbs["temporal"]))
	require.Equal(t, pgschema.VisibilityVersion, c.schemaVersion(t, c.local.dbs["temporal_visibility"]))

	// Again, while the server runs: nothing to do.
	serverBin, _ := build(t)
	run(t, serverBin, c.local.env(t, "temporal-schema", "", nil), "schema")
	require.Equal(t, pgschema.Version, c.schemaVersion(t, c.local.dbs["temporal"]))

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := c.client.CheckHealth(ctx, &client.CheckHealthRequest{})
	require.NoError(t, err)
}
