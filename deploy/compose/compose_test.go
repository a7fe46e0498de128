package compose

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"
	"go.yaml.in/yaml/v3"
)

// TestValidate_RepoFileKeepsEveryRule holds docker-compose.yml to every rule
// of Validate.
func TestValidate_RepoFileKeepsEveryRule(t *testing.T) {
	for _, p := range Validate(context.Background(), RepoFile(), ExampleEnv()) {
		t.Error(p)
	}
}

// TestLoad_ServicesAndWhatEachAzollaProcessIsTold pins what the rest of
// azolla relies on: the services, which run once, and what each azolla
// process is told.
func TestLoad_ServicesAndWhatEachAzollaProcessIsTold(t *testing.T) {
	ctx := context.Background()
	p, err := Load(ctx, RepoFile(), ExampleEnv())
	if err != nil {
		t.Fatal(err)
	}
	oneShots := map[string]bool{"temporal-schema": true, "temporal-setup": true, "migrate": true}
	for _, name := range []string{"postgres", "temporal-schema", "temporal", "temporal-ui", "redis",
		"temporal-setup", "migrate", "control-plane", "worker"} {
		s, ok := p.Services[name]
		if !ok {
			t.Errorf("no service %s", name)
			continue
		}
		if OneShot(s) != oneShots[name] {
			t.Errorf("service %s: one-shot %v, want %v", name, OneShot(s), oneShots[name])
		}
	}
	if got := p.Services["temporal"].Image; got != "temporalio/server:1.32.0" {
		t.Errorf("temporal image %s, want temporalio/server:1.32.0 (go.mod's go.temporal.io/server)", got)
	}
	if a, s := p.Services["temporal-schema"].Image, p.Services["temporal"].Image; strings.TrimPrefix(a, "temporalio/admin-tools:") !=
		strings.TrimPrefix(s, "temporalio/server:") {
		t.Errorf("admin-tools %s and server %s differ in version", a, s)
	}
	if r := p.Services["worker"].Deploy; r == nil || r.Replicas == nil || *r.Replicas < 1 {
		t.Error("worker: want deploy.replicas")
	}

	cp, err := ServiceEnv(ctx, "control-plane", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"AZOLLA_STORE_DRIVER":            "postgres",
		"AZOLLA_STORE_DSN":               "postgres://azolla@postgres:5432/azolla?sslmode=disable",
		"PGPASSWORD":                     "example-store",
		"AZOLLA_TEMPORAL_ADDRESS":        "temporal:7233",
		"AZOLLA_TEMPORAL_NAMESPACE":      "azolla",
		"AZOLLA_CONTROL_PLANE_REDIS_URL": "redis://redis:6379/0",
		"AZOLLA_CONTROL_PLANE_ADDRESS":   "0.0.0.0:7350",
	}
	for k, v := range want {
		if cp[k] != v {
			t.Errorf("control-plane %s = %q, want %q", k, cp[k], v)
		}
	}
	w, err := ServiceEnv(ctx, "worker", map[string]string{"POSTGRES_PASSWORD": "a", "TEMPORAL_DB_PASSWORD": "b",
		"STORE_DB_PASSWORD": "c", "TEMPORAL_NAMESPACE": "prod", "REMOTE_DIAZOTROPHS": "PATCH_DIAZOTROPH"})
	if err != nil {
		t.Fatal(err)
	}
	if w["AZOLLA_TEMPORAL_NAMESPACE"] != "prod" || w["AZOLLA_CONTROL_PLANE_REMOTE_DIAZOTROPHS"] != "PATCH_DIAZOTROPH" ||
		w["PGPASSWORD"] != "c" {
		t.Errorf("worker env does not follow the env file: %v", w)
	}
	if _, ok := w["AZOLLA_CONTROL_PLANE_ADDRESS"]; ok {
		t.Error("worker: AZOLLA_CONTROL_PLANE_ADDRESS is the control plane's alone")
	}
	if w["AZOLLA_OPS_ADDRESS"] != "0.0.0.0:7360" {
		t.Errorf("worker AZOLLA_OPS_ADDRESS = %q, want 0.0.0.0:7360", w["AZOLLA_OPS_ADDRESS"])
	}
	if _, err := ServiceEnv(ctx, "nope", nil); err == nil {
		t.Error("ServiceEnv of an unknown service: no error")
	}
}

// TestOpsAddress_ReachableFromTheNetwork: the worker and the control plane
// serve /metrics, /readyz and /healthz on every interface of their
// containers, where Prometheus reaches them, and on the ports their
// healthchecks probe; the other services serve none.
func TestOpsAddress_ReachableFromTheNetwork(t *testing.T) {
	p, err := Load(context.Background(), RepoFile(), ExampleEnv())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"worker": "0.0.0.0:7360", "control-plane": "0.0.0.0:7350"}
	for name, s := range p.Services {
		addr, _, ok := OpsAddress(s)
		if ok != (want[name] != "") || addr != want[name] {
			t.Errorf("service %s: ops address %q (%v), want %q", name, addr, ok, want[name])
			continue
		}
		if !ok {
			continue
		}
		_, port, _ := net.SplitHostPort(addr)
		if probe := strings.Join(s.HealthCheck.Test, " "); !strings.Contains(probe, "http://127.0.0.1:"+port+"/") {
			t.Errorf("service %s: healthcheck %q does not probe port %s", name, probe, port)
		}
	}
}

// TestLoad_PrometheusOnlyUnderTheMonitoringProfile: a plain `docker compose
// up` leaves Prometheus out; `--profile monitoring` adds it, published on
// 127.0.0.1 only.
func TestLoad_PrometheusOnlyUnderTheMonitoringProfile(t *testing.T) {
	ctx := context.Background()
	plain, err := Load(ctx, RepoFile(), ExampleEnv())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := plain.Services["prometheus"]; ok {
		t.Error("prometheus starts without --profile monitoring")
	}
	if _, ok := plain.DisabledServices["prometheus"]; !ok {
		t.Error("no prometheus service in the file")
	}
	for name, s := range plain.Services {
		if len(s.Profiles) > 0 {
			t.Errorf("service %s (profiles %v) starts without a profile", name, s.Profiles)
		}
	}

	mon, err := Load(ctx, RepoFile(), ExampleEnv(), MonitoringProfile)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := mon.Services["prometheus"]
	if !ok {
		t.Fatal("--profile monitoring: no prometheus")
	}
	if !slices.Equal(s.Profiles, []string{MonitoringProfile}) {
		t.Errorf("prometheus profiles %v, want [%s]", s.Profiles, MonitoringProfile)
	}
	if len(mon.Services) != len(plain.Services)+1 {
		t.Errorf("--profile monitoring starts %d services, want the %d of a plain up and prometheus", len(mon.Services), len(plain.Services))
	}
	if len(s.Ports) != 1 || s.Ports[0].HostIP != "127.0.0.1" || s.Ports[0].Published != "9090" || s.Ports[0].Target != 9090 {
		t.Errorf("prometheus ports %+v, want 127.0.0.1:9090:9090", s.Ports)
	}
	if file, ro := PrometheusConfigFile(s); file != filepath.Join(filepath.Dir(RepoFile()), "deploy", "compose", "prometheus.yml") || !ro {
		t.Errorf("prometheus reads %s (read-only %v), want deploy/compose/prometheus.yml read-only", file, ro)
	}
}

// TestPrometheus_ScrapesEveryReplicaWhereItServesMetrics reads
// deploy/compose/prometheus.yml as plain YAML, apart from the code Validate
// uses, and wants each serving azolla service found by a DNS A lookup of
// its name (every replica) on the port its ops address names.
func TestPrometheus_ScrapesEveryReplicaWhereItServesMetrics(t *testing.T) {
	p, err := Load(context.Background(), RepoFile(), ExampleEnv(), AllProfiles)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		ScrapeConfigs []map[string]any `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(scrapeConfig(t), &cfg); err != nil {
		t.Fatal(err)
	}
	scraped := map[string]int{} // service → port
	for _, job := range cfg.ScrapeConfigs {
		if path, ok := job["metrics_path"]; ok && path != "/metrics" {
			t.Errorf("job %v: metrics_path %v", job["job_name"], path)
		}
		sds, _ := job["dns_sd_configs"].([]any)
		for _, sd := range sds {
			sd := sd.(map[string]any)
			if sd["type"] != "A" {
				t.Errorf("job %v: dns_sd type %v, want A", job["job_name"], sd["type"])
			}
			for _, n := range sd["names"].([]any) {
				scraped[n.(string)] = sd["port"].(int)
			}
		}
	}
	for _, name := range []string{"worker", "control-plane"} {
		addr, _, _ := OpsAddress(p.Services[name])
		_, port, _ := net.SplitHostPort(addr)
		if got := strconv.Itoa(scraped[name]); got != port {
			t.Errorf("%s serves /metrics on port %s; prometheus.yml scrapes it by DNS on %s", name, port, got)
		}
	}
}

// TestLoad_RefusesToStartWithoutAPassword: compose refuses to start without
// a password rather than starting with an empty one.
func TestLoad_RefusesToStartWithoutAPassword(t *testing.T) {
	env := ExampleEnv()
	delete(env, "STORE_DB_PASSWORD")
	if _, err := Load(context.Background(), RepoFile(), env); err == nil || !strings.Contains(err.Error(), "STORE_DB_PASSWORD") {
		t.Errorf("load without STORE_DB_PASSWORD: %v, want an error naming it", err)
	}
}

// TestValidate_NamesEachProblemOfABrokenCopy feeds broken copies of the
// file, next to copies of its mounted files, and expects Validate to name
// each problem.
func TestValidate_NamesEachProblemOfABrokenCopy(t *testing.T) {
	orig, err := os.ReadFile(RepoFile())
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, old, new, want string
	}{
		{"unpinned image", "image: redis:7.4.6", "image: redis", "image redis is not pinned"},
		{"latest image", "image: temporalio/ui:2.54.1", "image: temporalio/ui:latest", "temporalio/ui:latest is not pinned"},
		{"floating tag", "image: postgres:16.11", "image: postgres:alpine", `tag "alpine" is not a version`},
		{"unknown AZOLLA_ key", "AZOLLA_LOG_FORMAT: json", "AZOLLA_LOG_FORMATT: json", "AZOLLA_LOG_FORMATT, which is not an azolla configuration key"},
		{"variable without default", "${TEMPORAL_NAMESPACE:-azolla}", "${TEMPORAL_NAMESPACE}", "$TEMPORAL_NAMESPACE has no default"},
		{"bare variable", "AZOLLA_LOG_FORMAT: json", "AZOLLA_LOG_FORMAT: $LOG_FORMAT", "$LOG_FORMAT has no default"},
		{"DSN host not a service", "@postgres:5432/azolla", "@db.internal:5432/azolla", `AZOLLA_STORE_DSN names host "db.internal"`},
		{"Temporal host not a service", "POSTGRES_SEEDS: postgres", "POSTGRES_SEEDS: pg", `POSTGRES_SEEDS names host "pg"`},
		{"Redis host not a service", "redis://redis:6379/0", "redis://cache:6379/0", `AZOLLA_CONTROL_PLANE_REDIS_URL names host "cache"`},
		{"missing mounted file", "./deploy/compose/dynamicconfig.yaml:", "./deploy/compose/dynamic.yaml:", "mounts deploy/compose/dynamic.yaml, which does not exist"},
		{"no healthcheck", "test: [\"CMD\", \"redis-cli\", \"ping\"]", "disable: true", "service redis: a long-running service needs a healthcheck"},
		{"dependency not a service", "      redis:\n        condition: service_healthy\n    environment:\n      <<: *azolla-env\n      # Every",
			"      redis:\n        condition: service_healthy\n      cache:\n        condition: service_healthy\n    environment:\n      <<: *azolla-env\n      # Every",
			`undefined service "cache"`},
		{"one-shot waited for as healthy", "migrate:\n        condition: service_completed_successfully\n      temporal-setup:\n        condition: service_completed_successfully\n      redis:\n        condition: service_healthy\n    environment:\n      <<: *azolla-env\n      # The ops",
			"migrate:\n        condition: service_started\n      temporal-setup:\n        condition: service_completed_successfully\n      redis:\n        condition: service_healthy\n    environment:\n      <<: *azolla-env\n      # The ops",
			`service worker: depends on one-shot "migrate" with condition "service_started"`},
		{"port on every interface", "${PUBLISH_IP:-127.0.0.1}:${TEMPORAL_UI_PORT:-8080}:8080", "${TEMPORAL_UI_PORT:-8080}:8080", `publishes 8080 on ""`},
		{"password in the file", "POSTGRES_PWD: ${TEMPORAL_DB_PASSWORD:?set TEMPORAL_DB_PASSWORD in deploy/compose/azolla.env}", "POSTGRES_PWD: hunter2", "POSTGRES_PWD is written in the file"},
		{"password in a list item", "    environment:\n      SQL_PLUGIN: postgres12\n      SQL_HOST: postgres\n      SQL_PORT: \"5432\"\n      SQL_USER: temporal\n      SQL_PASSWORD: ${TEMPORAL_DB_PASSWORD:?set TEMPORAL_DB_PASSWORD in deploy/compose/azolla.env}\n",
			"    environment:\n      - SQL_PLUGIN=postgres12\n      - SQL_HOST=postgres\n      - SQL_PORT=5432\n      - SQL_USER=temporal\n      - SQL_PASSWORD=hunter2\n", "SQL_PASSWORD is written in the file"},
		{"worker ops on loopback", "AZOLLA_OPS_ADDRESS: 0.0.0.0:7360", "AZOLLA_OPS_ADDRESS: 127.0.0.1:7360",
			"service worker: serves /metrics, /readyz and /healthz on loopback 127.0.0.1:7360"},
		{"worker ops at the default", "      AZOLLA_OPS_ADDRESS: 0.0.0.0:7360\n", "",
			"service worker: serves /metrics, /readyz and /healthz on loopback 127.0.0.1:7360 (AZOLLA_OPS_ADDRESS)"},
		{"worker ops off", "AZOLLA_OPS_ADDRESS: 0.0.0.0:7360", `AZOLLA_OPS_ADDRESS: ""`,
			"service worker: AZOLLA_OPS_ADDRESS is empty"},
		{"control plane on loopback", "AZOLLA_CONTROL_PLANE_ADDRESS: 0.0.0.0:7350", "AZOLLA_CONTROL_PLANE_ADDRESS: localhost:7350",
			"service control-plane: serves /metrics, /readyz and /healthz on loopback localhost:7350"},
		{"healthcheck on another port", "AZOLLA_OPS_ADDRESS: 0.0.0.0:7360", "AZOLLA_OPS_ADDRESS: 0.0.0.0:7361",
			"service worker: healthcheck probes http://127.0.0.1:7360/readyz, but the ops endpoints are on port 7361"},
		{"ops moved, scrape config not", "AZOLLA_OPS_ADDRESS: 0.0.0.0:7360", "AZOLLA_OPS_ADDRESS: 0.0.0.0:7361",
			"service prometheus: job azolla-worker scrapes worker on port 7360, but it serves /metrics on 7361"},
		{"Prometheus always on", "    profiles: [monitoring]\n", "",
			"service prometheus: Prometheus is optional: put it under profiles: [monitoring]"},
		{"Prometheus needed by a default service", "      redis:\n        condition: service_healthy\n    environment:\n      <<: *azolla-env\n      # Every",
			"      redis:\n        condition: service_healthy\n      prometheus:\n        condition: service_healthy\n    environment:\n      <<: *azolla-env\n      # Every",
			`service control-plane: depends on "prometheus", which is optional`},
		{"scrape config writable", "prometheus.yml:/etc/prometheus/prometheus.yml:ro", "prometheus.yml:/etc/prometheus/prometheus.yml",
			"service prometheus: mounts deploy/compose/prometheus.yml writable"},
		{"Prometheus image unpinned", "image: prom/prometheus:v3.5.0", "image: prom/prometheus:main", `tag "main" is not a version`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantProblem(t, brokenCopy(t, edit(t, "docker-compose.yml", string(orig), c.old, c.new), ""), c.want)
		})
	}
}

// TestValidate_NamesEachProblemOfABrokenScrapeConfig does the same with
// broken copies of deploy/compose/prometheus.yml beside the file as it is.
func TestValidate_NamesEachProblemOfABrokenScrapeConfig(t *testing.T) {
	orig, err := os.ReadFile(RepoFile())
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, old, new, want string
	}{
		{"scrape on the wrong port", "port: 7360", "port: 9100",
			"service prometheus: job azolla-worker scrapes worker on port 9100, but it serves /metrics on 7360"},
		{"one replica scraped", "    dns_sd_configs:\n      - names: [worker]\n        type: A\n        port: 7360\n",
			"    static_configs:\n      - targets: [worker:7360]\n",
			"service prometheus: job azolla-worker scrapes worker as a static target, which reaches one replica"},
		{"control plane not scraped", "names: [control-plane]", "names: [worker]",
			"service prometheus: scrapes no control-plane on port 7350"},
		{"scrape of an unknown host", "names: [control-plane]", "names: [cp]",
			"job azolla-control-plane scrapes cp, which is not a service in the file"},
		{"SRV lookup", "type: A\n        port: 7350", "type: SRV\n        port: 7350", `dns_sd type "SRV"`},
		{"metrics behind TLS", "job_name: azolla-control-plane\n", "job_name: azolla-control-plane\n    scheme: https\n",
			"job azolla-control-plane scrapes control-plane at https://…/metrics, but it serves plain http"},
		{"not YAML", "scrape_configs:", "scrape_configs: [", "prometheus.yml: yaml:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			scrape := edit(t, "prometheus.yml", string(scrapeConfig(t)), c.old, c.new)
			wantProblem(t, brokenCopy(t, string(orig), scrape), c.want)
		})
	}
}

// edit replaces old in text, which must hold it, once.
func edit(t *testing.T, file, text, old, new string) string {
	t.Helper()
	if !strings.Contains(text, old) {
		t.Fatalf("%s no longer contains %q: update this case", file, old)
	}
	return strings.Replace(text, old, new, 1)
}

// wantProblem validates the compose file at path and wants a problem
// containing want.
func wantProblem(t *testing.T, path, want string) {
	t.Helper()
	problems := Validate(context.Background(), path, ExampleEnv())
	for _, p := range problems {
		if strings.Contains(p, want) {
			return
		}
	}
	t.Errorf("want a problem containing %q, got %q", want, problems)
}

func scrapeConfig(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(filepath.Dir(RepoFile()), "deploy", "compose", "prometheus.yml"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// brokenCopy writes content as docker-compose.yml in a temporary project
// that holds the repository's Dockerfile and deploy/compose files (with
// scrape, when not empty, as prometheus.yml), so only the change under
// test can fail.
func brokenCopy(t *testing.T, content, scrape string) string {
	t.Helper()
	root := filepath.Dir(RepoFile())
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "deploy", "compose"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"Dockerfile", "deploy/compose/postgres-init.sh", "deploy/compose/temporal-schema.sh",
		"deploy/compose/dynamicconfig.yaml", "deploy/compose/prometheus.yml"} {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if scrape != "" {
		if err := os.WriteFile(filepath.Join(dir, "deploy", "compose", "prometheus.yml"), []byte(scrape), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "docker-compose.yml")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestValidate_AnUnchangedCopyPasses: the temporary project of
// TestValidate_NamesEachProblemOfABrokenCopy passes as it is, so each case
// fails for its own change only.
func TestValidate_AnUnchangedCopyPasses(t *testing.T) {
	orig, err := os.ReadFile(RepoFile())
	if err != nil {
		t.Fatal(err)
	}
	if p := Validate(context.Background(), brokenCopy(t, string(orig), ""), ExampleEnv()); len(p) > 0 {
		t.Errorf("unchanged copy: %q", p)
	}
}

// TestEnvKeys_LeavesOutWhatOnlyTheFileSets spot-checks the keys derived from
// the configuration struct: leaves of each section are there, maps and lists
// of sections are not.
func TestEnvKeys_LeavesOutWhatOnlyTheFileSets(t *testing.T) {
	keys := EnvKeys()
	for _, k := range []string{"AZOLLA_STORE_DSN", "AZOLLA_TEMPORAL_TLS_CA_FILE", "AZOLLA_CONTROL_PLANE_REDIS_URL",
		"AZOLLA_CONTROL_PLANE_REMOTE_DIAZOTROPHS", "AZOLLA_DEADLINES_SLA_CRITICAL", "AZOLLA_DATA_DIR"} {
		if !keys[k] {
			t.Errorf("%s missing", k)
		}
	}
	for _, k := range []string{"AZOLLA_SUBSTRATES", "AZOLLA_PATCH_REPOSITORIES", "AZOLLA_STORE"} {
		if keys[k] {
			t.Errorf("%s is not settable from the environment", k)
		}
	}
}

// TestDockerfile_PinnedLeanAndNonRoot holds the image docker-compose.yml
// builds to the same rules: base images pinned, the lean binary (no
// devserver tag) and only its modules fetched, git in the runtime, a
// non-root user, azolla as the entrypoint.
func TestDockerfile_PinnedLeanAndNonRoot(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(filepath.Dir(RepoFile()), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	args := map[string]string{}
	var froms []string
	user := ""
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "ARG":
			if k, v, ok := strings.Cut(f[1], "="); ok {
				args[k] = strings.Trim(v, `"`)
			}
		case "FROM":
			img := f[1]
			for k, v := range args {
				img = strings.ReplaceAll(img, "${"+k+"}", v)
			}
			froms = append(froms, img)
		case "USER":
			user = f[1]
		}
	}
	if len(froms) < 2 {
		t.Errorf("want a multi-stage build, got FROM %v", froms)
	}
	for _, img := range froms {
		if msg := checkImage(types.ServiceConfig{Image: img}); msg != nil || strings.Contains(img, "$") {
			t.Errorf("FROM %s: %v", img, msg)
		}
	}
	if user == "" || strings.HasPrefix(user, "root") || strings.HasPrefix(user, "0") {
		t.Errorf("runtime user %q, want a non-root one", user)
	}
	for _, want := range []string{" git ", "go build", "./cmd/azolla", `ENTRYPOINT ["/usr/local/bin/azolla"]`} {
		if !strings.Contains(text, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	if args["GO_TAGS"] != "" {
		t.Errorf("GO_TAGS defaults to %q: the production image is the lean build", args["GO_TAGS"])
	}
	for _, line := range strings.Split(text, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] != "#" && strings.HasSuffix(strings.TrimSpace(line), "go mod download") {
			t.Errorf("%q fetches the whole module graph, the devserver's included: let go build fetch what the lean binary links", line)
		}
	}
}
