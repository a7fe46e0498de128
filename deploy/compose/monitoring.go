package compose

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/compose-spec/compose-go/v2/types"
	"go.yaml.in/yaml/v3"

	"github.com/azolla/azolla/internal/config"
)

// MonitoringProfile is the compose profile of the optional Prometheus.
const MonitoringProfile = "monitoring"

// prometheusConfig is where the Prometheus image reads its configuration
// unless --config.file says otherwise.
const prometheusConfig = "/etc/prometheus/prometheus.yml"

// opsListeners are the azolla commands that serve GET /healthz, /readyz and
// /metrics, each with the variable of the address it serves them on and
// that address's default (docs/compose.md, Operations).
var opsListeners = map[string]struct{ key, def string }{
	"worker":        {"AZOLLA_OPS_ADDRESS", config.DefaultOpsAddress},
	"control-plane": {"AZOLLA_CONTROL_PLANE_ADDRESS", config.DefaultControlPlaneAddress},
}

// OpsAddress is the address inside its container on which s serves its
// ops endpoints: its environment's, else the default; "" when it serves
// none. ok is false for a service that runs no azolla process serving them.
func OpsAddress(s types.ServiceConfig) (addr, key string, ok bool) {
	if s.Build == nil || len(s.Command) == 0 {
		return "", "", false
	}
	l, ok := opsListeners[s.Command[0]]
	if !ok {
		return "", "", false
	}
	if v, set := s.Environment[l.key]; set && v != nil {
		return *v, l.key, true
	}
	return l.def, l.key, true
}

// checkOps requires a serving azolla process to serve its ops endpoints on
// an interface the network reaches (a container's loopback is its own, so
// nothing could scrape them there), and its healthcheck to probe the port
// they are on.
func checkOps(s types.ServiceConfig) []string {
	addr, key, ok := OpsAddress(s)
	if !ok {
		return nil
	}
	if addr == "" {
		return []string{fmt.Sprintf("%s is empty: it serves no /healthz, /readyz or /metrics", key)}
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return []string{fmt.Sprintf("%s=%s is not host:port", key, addr)}
	}
	var out []string
	if isLoopback(host) {
		out = append(out, fmt.Sprintf("serves /metrics, /readyz and /healthz on loopback %s (%s): nothing outside its container reaches them; bind 0.0.0.0:%s",
			addr, key, port))
	}
	if s.HealthCheck != nil && !s.HealthCheck.Disable {
		for _, arg := range s.HealthCheck.Test {
			u, err := url.Parse(arg)
			if err != nil || u.Scheme == "" || u.Host == "" {
				continue
			}
			if u.Port() != port {
				out = append(out, fmt.Sprintf("healthcheck probes %s, but the ops endpoints are on port %s (%s)", arg, port, key))
			}
		}
	}
	return out
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ScrapeTarget is one host:port a Prometheus scrape job reaches, and
// whether it finds the host's addresses by DNS (every replica of a compose
// service) or names one address.
type ScrapeTarget struct {
	Job, Host, Port, MetricsPath, Scheme string
	DNS                                  bool
}

// scrapeFile is the part of Prometheus's configuration the checks read.
type scrapeFile struct {
	ScrapeConfigs []struct {
		JobName       string `yaml:"job_name"`
		MetricsPath   string `yaml:"metrics_path"`
		Scheme        string `yaml:"scheme"`
		StaticConfigs []struct {
			Targets []string `yaml:"targets"`
		} `yaml:"static_configs"`
		DNSSDConfigs []struct {
			Names []string `yaml:"names"`
			Type  string   `yaml:"type"`
			Port  int      `yaml:"port"`
		} `yaml:"dns_sd_configs"`
	} `yaml:"scrape_configs"`
}

// ScrapeTargets reads a Prometheus configuration file's static and DNS
// (type A) targets.
func ScrapeTargets(file string) ([]ScrapeTarget, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var f scrapeFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var out []ScrapeTarget
	for _, j := range f.ScrapeConfigs {
		t := ScrapeTarget{Job: j.JobName, MetricsPath: j.MetricsPath, Scheme: j.Scheme}
		if t.MetricsPath == "" {
			t.MetricsPath = "/metrics"
		}
		if t.Scheme == "" {
			t.Scheme = "http"
		}
		for _, sc := range j.StaticConfigs {
			for _, hp := range sc.Targets {
				h, p, err := net.SplitHostPort(hp)
				if err != nil {
					return nil, fmt.Errorf("%s: job %s: target %q is not host:port", file, j.JobName, hp)
				}
				t.Host, t.Port, t.DNS = h, p, false
				out = append(out, t)
			}
		}
		for _, d := range j.DNSSDConfigs {
			if d.Type != "A" && d.Type != "AAAA" {
				return nil, fmt.Errorf("%s: job %s: dns_sd type %q: Docker's DNS answers A (and AAAA) lookups of a service", file, j.JobName, d.Type)
			}
			for _, n := range d.Names {
				t.Host, t.Port, t.DNS = n, strconv.Itoa(d.Port), true
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// PrometheusConfigFile is the file on the host that service s, a
// Prometheus, reads its configuration from, and whether it mounts it
// read-only; "" when it mounts none.
func PrometheusConfigFile(s types.ServiceConfig) (file string, readOnly bool) {
	target := prometheusConfig
	for _, arg := range s.Command {
		if v, ok := strings.CutPrefix(arg, "--config.file="); ok {
			target = v
		}
	}
	for _, v := range s.Volumes {
		if v.Type == types.VolumeTypeBind && path.Clean(v.Target) == path.Clean(target) {
			return v.Source, v.ReadOnly
		}
	}
	return "", false
}

// isPrometheus says whether s runs the Prometheus image.
func isPrometheus(s types.ServiceConfig) bool {
	repo, _, _ := strings.Cut(s.Image, ":")
	return repo == "prom/prometheus" || strings.HasSuffix(repo, "/prometheus/prometheus")
}

// checkPrometheus holds a Prometheus service to its place: optional (under
// MonitoringProfile), its configuration mounted read-only, every serving
// azolla service scraped on the port it serves /metrics on, through DNS so
// that every replica is, and nothing scraped that is not in the file.
func checkPrometheus(p *types.Project, s types.ServiceConfig) []string {
	if !isPrometheus(s) {
		return nil
	}
	var out []string
	if !slices.Contains(s.Profiles, MonitoringProfile) {
		out = append(out, fmt.Sprintf("Prometheus is optional: put it under profiles: [%s]", MonitoringProfile))
	}
	file, ro := PrometheusConfigFile(s)
	if file == "" {
		return append(out, "mounts no configuration file at --config.file")
	}
	if !ro {
		out = append(out, fmt.Sprintf("mounts %s writable: mount it read-only (:ro)", relTo(p.WorkingDir, file)))
	}
	targets, err := ScrapeTargets(file)
	if err != nil {
		return append(out, err.Error())
	}
	for _, t := range targets {
		if t.Host == "localhost" || t.Host == "127.0.0.1" {
			continue // Prometheus itself
		}
		target, ok := p.Services[t.Host]
		if !ok {
			out = append(out, fmt.Sprintf("job %s scrapes %s, which is not a service in the file", t.Job, t.Host))
			continue
		}
		if !t.DNS {
			out = append(out, fmt.Sprintf("job %s scrapes %s as a static target, which reaches one replica: use dns_sd_configs, type A", t.Job, t.Host))
		}
		if addr, key, ok := OpsAddress(target); ok {
			if _, port, err := net.SplitHostPort(addr); err == nil && port != t.Port {
				out = append(out, fmt.Sprintf("job %s scrapes %s on port %s, but it serves /metrics on %s (%s)", t.Job, t.Host, t.Port, port, key))
			}
			if t.MetricsPath != "/metrics" || t.Scheme != "http" {
				out = append(out, fmt.Sprintf("job %s scrapes %s at %s://…%s, but it serves plain http …/metrics", t.Job, t.Host, t.Scheme, t.MetricsPath))
			}
		}
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range p.Services {
			if !yield(n) {
				return
			}
		}
	}) {
		addr, _, ok := OpsAddress(p.Services[name])
		if !ok || addr == "" {
			continue
		}
		_, port, _ := net.SplitHostPort(addr)
		if !slices.ContainsFunc(targets, func(t ScrapeTarget) bool { return t.Host == name && t.Port == port }) {
			out = append(out, fmt.Sprintf("scrapes no %s on port %s, where it serves /metrics", name, port))
		}
	}
	return out
}
