package topology

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"
	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/deploy/compose"
)

// local is where this host puts what docker-compose.yml names on the
// compose network. localize applies one mapping to every service's
// environment, as compose resolves it (compose.ServiceEnv), and nothing
// else changes:
//
//   - host postgres, port 5432 (the host of AZOLLA_STORE_DSN, POSTGRES_SEEDS
//     and DB_PORT, SQL_HOST and SQL_PORT) → the test's PostgreSQL;
//   - the databases temporal, temporal_visibility and azolla (DBNAME,
//     VISIBILITY_DBNAME, the DSN's path; temporal-schema.sh's fixed names,
//     which the schema step reads as DBNAME and VISIBILITY_DBNAME) → fresh
//     databases of the test, created as postgres-init.sh creates them;
//   - temporal:7233 (AZOLLA_TEMPORAL_ADDRESS, TEMPORAL_ADDRESS) →
//     127.0.0.1 and a free port, which the server gets as
//     FRONTEND_GRPC_PORT (the image's default, 7233, in compose);
//   - redis:6379/0 (AZOLLA_CONTROL_PLANE_REDIS_URL) → the test's Redis, on a
//     logical database the test owns and flushes;
//   - every interface of a container (BIND_ON_IP 0.0.0.0,
//     AZOLLA_CONTROL_PLANE_ADDRESS 0.0.0.0:7350) → 127.0.0.1, and for the
//     control plane a free port: all processes share this host's loopback;
//   - DYNAMIC_CONFIG_FILE_PATH, a path inside the container → the file the
//     service mounts there (deploy/compose/dynamicconfig.yaml);
//   - the ops listener of an azolla process (its /healthz, /readyz and
//     /metrics), 0.0.0.0:7360 in each worker container (or the default
//     where the file sets none) → 127.0.0.1 and a free port per process,
//     set as AZOLLA_OPS_ADDRESS;
//   - AZOLLA_DATA_DIR (/var/lib/azolla in each container) → a directory of
//     the process's own, as each replica has its own container.
//
// Passwords stay the compose file's, interpolated from compose.ExampleEnv:
// the test's PostgreSQL trusts local connections, so they are sent and
// ignored. A value that still names a compose service after the mapping
// fails the test: the mapping must grow with the file.
type local struct {
	pgHost, pgPort string
	dbs            map[string]string // compose name → fresh name
	temporalPort   int
	redisURL       string // scheme, host, port and logical database
	controlPlane   string // host:port the control plane listens on
	vars           map[string]string
}

const opsAddress = "AZOLLA_OPS_ADDRESS"

// interpolation is compose.ExampleEnv with the remote diazotrophs the test
// routes to its remote worker.
func interpolation(remote string) map[string]string {
	vars := compose.ExampleEnv()
	vars["REMOTE_DIAZOTROPHS"] = remote
	return vars
}

// env returns service's environment on this host: the compose service's,
// mapped, then extra (the test's own settings, which may not override a
// key the file sets), over this process's environment without any
// AZOLLA_*, PG* or TEMPORAL_* variable of its own.
func (l *local) env(t testing.TB, service, dataDir string, extra map[string]string) []string {
	t.Helper()
	ctx := context.Background()
	p, err := compose.Load(ctx, compose.RepoFile(), l.vars)
	require.NoError(t, err)
	s, ok := p.Services[service]
	require.True(t, ok, "no service %s in docker-compose.yml", service)
	raw, err := compose.ServiceEnv(ctx, service, l.vars)
	require.NoError(t, err)

	out := map[string]string{}
	for k, v := range raw {
		out[k] = l.mapValue(t, s, k, v, dataDir)
	}
	if s.Build != nil && compose.EnvKeys()[opsAddress] {
		if _, set := raw[opsAddress]; !set {
			out[opsAddress] = net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
		}
	}
	switch service {
	case "temporal":
		out["FRONTEND_GRPC_PORT"] = strconv.Itoa(l.temporalPort)
	case "temporal-schema":
		out["DBNAME"], out["VISIBILITY_DBNAME"] = l.dbs["temporal"], l.dbs["temporal_visibility"]
	}
	for k, v := range out {
		if _, ok := p.Services[hostIn(v)]; ok {
			t.Fatalf("service %s: %s=%s still names compose service %s: extend localize's mapping", service, k, v, hostIn(v))
		}
	}
	for k, v := range extra {
		_, set := raw[k]
		require.False(t, set, "service %s: the test may not override %s, which docker-compose.yml sets", service, k)
		out[k] = v
	}

	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "AZOLLA_") || strings.HasPrefix(k, "PG") || strings.HasPrefix(k, "TEMPORAL_") {
			continue
		}
		if _, ok := out[k]; !ok {
			env = append(env, kv)
		}
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range out {
			if !yield(k) {
				return
			}
		}
	}) {
		env = append(env, k+"="+out[k])
	}
	return env
}

func (l *local) mapValue(t testing.TB, s types.ServiceConfig, key, val, dataDir string) string {
	t.Helper()
	switch key {
	case "AZOLLA_STORE_DSN":
		u, err := url.Parse(val)
		require.NoError(t, err, "%s: %s", s.Name, key)
		require.Equal(t, "postgres", u.Hostname(), "%s: %s", s.Name, key)
		u.Host = net.JoinHostPort(l.pgHost, l.pgPort)
		db := strings.TrimPrefix(u.Path, "/")
		require.Contains(t, l.dbs, db, "%s: %s names database %s", s.Name, key, db)
		u.Path = "/" + l.dbs[db]
		return u.String()
	case "AZOLLA_CONTROL_PLANE_REDIS_URL":
		u, err := url.Parse(val)
		require.NoError(t, err, "%s: %s", s.Name, key)
		require.Equal(t, "redis", u.Hostname(), "%s: %s", s.Name, key)
		return l.redisURL
	case "AZOLLA_TEMPORAL_ADDRESS", "TEMPORAL_ADDRESS":
		require.Equal(t, "temporal:7233", val, "%s: %s", s.Name, key)
		return net.JoinHostPort("127.0.0.1", strconv.Itoa(l.temporalPort))
	case "POSTGRES_SEEDS", "SQL_HOST":
		require.Equal(t, "postgres", val, "%s: %s", s.Name, key)
		return l.pgHost
	case "DB_PORT", "SQL_PORT":
		require.Equal(t, "5432", val, "%s: %s", s.Name, key)
		return l.pgPort
	case "DBNAME", "VISIBILITY_DBNAME":
		require.Contains(t, l.dbs, val, "%s: %s", s.Name, key)
		return l.dbs[val]
	case "BIND_ON_IP":
		return "127.0.0.1"
	case "AZOLLA_CONTROL_PLANE_ADDRESS":
		_, port, err := net.SplitHostPort(val)
		require.NoError(t, err, "%s: %s", s.Name, key)
		require.Equal(t, "7350", port, "%s: %s", s.Name, key)
		return l.controlPlane
	case "DYNAMIC_CONFIG_FILE_PATH":
		for _, v := range s.Volumes {
			if v.Type == types.VolumeTypeBind && path.Clean(v.Target) == path.Clean(val) {
				return v.Source
			}
		}
		t.Fatalf("%s: %s=%s is not a file the service mounts", s.Name, key, val)
	case opsAddress:
		return net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	case "AZOLLA_DATA_DIR":
		require.NotEmpty(t, dataDir, "%s: a data directory", s.Name)
		return dataDir
	}
	return val
}

// hostIn is the host a URL or host:port value names, "" for other values.
func hostIn(v string) string {
	if u, err := url.Parse(v); err == nil && u.Host != "" {
		return u.Hostname()
	}
	if h, _, err := net.SplitHostPort(v); err == nil {
		return h
	}
	return ""
}

// String names the mapping's targets, for the test log.
func (l *local) String() string {
	return fmt.Sprintf("postgres → %s:%s, databases %v, temporal → 127.0.0.1:%d, redis → %s, control plane → %s",
		l.pgHost, l.pgPort, l.dbs, l.temporalPort, l.redisURL, l.controlPlane)
}
