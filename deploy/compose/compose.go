// Package compose loads and checks docker-compose.yml, azolla's production
// topology on one Docker host, with compose-spec/compose-go: the file the
// Docker CLI reads, parsed the way it parses it. Validate is what the tests
// hold the file to; ServiceEnv gives a later topology test each service's
// environment as compose resolves it, so the file and the proofs about it
// cannot drift apart.
package compose

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"

	"github.com/azolla/azolla/internal/config"
)

// ProjectName is the compose project the file names.
const ProjectName = "azolla"

// RepoFile is the compose file in this repository.
func RepoFile() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "docker-compose.yml")
}

// ExampleEnv is the interpolation environment of the checks: the secrets
// deploy/compose/azolla.env must provide, with placeholder values, and
// nothing else, so every optional variable takes its default.
func ExampleEnv() map[string]string {
	return map[string]string{
		"POSTGRES_PASSWORD":    "example-postgres",
		"TEMPORAL_DB_PASSWORD": "example-temporal",
		"STORE_DB_PASSWORD":    "example-store",
	}
}

// AllProfiles enables every service, whatever its profiles.
const AllProfiles = "*"

// Load parses the compose file at path, interpolated from env only (never
// from the process environment), as `docker compose` would with profiles
// enabled (`--profile`): a service under none of them is in the project's
// DisabledServices, not its Services.
func Load(ctx context.Context, path string, env map[string]string, profiles ...string) (*types.Project, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, err
	}
	details := types.ConfigDetails{
		WorkingDir:  filepath.Dir(abs),
		ConfigFiles: []types.ConfigFile{{Filename: abs, Content: data}},
		Environment: types.Mapping(env),
	}
	return loader.LoadWithContext(ctx, details, func(o *loader.Options) {
		o.SetProjectName(ProjectName, true)
		o.ResolvePaths = true
		o.Profiles = profiles
	})
}

// ServiceEnv returns the environment compose gives service in the
// repository's docker-compose.yml, interpolated from env (ExampleEnv when
// nil). An unset variable (a key without a value) is left out.
func ServiceEnv(ctx context.Context, service string, env map[string]string) (map[string]string, error) {
	if env == nil {
		env = ExampleEnv()
	}
	p, err := Load(ctx, RepoFile(), env)
	if err != nil {
		return nil, err
	}
	s, ok := p.Services[service]
	if !ok {
		return nil, fmt.Errorf("compose: no service %q in %s", service, RepoFile())
	}
	out := map[string]string{}
	for k, v := range s.Environment {
		if v != nil {
			out[k] = *v
		}
	}
	return out, nil
}

// Validate loads the compose file at path with env, every profile
// enabled, and returns every problem found, each naming its service and
// what is wrong; none means the file passes. See the checks below and in
// monitoring.go for the rules.
func Validate(ctx context.Context, path string, env map[string]string) []string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return []string{err.Error()}
	}
	problems := checkInterpolation(string(raw))
	p, err := Load(ctx, path, env, AllProfiles)
	if err != nil {
		return append(problems, "load: "+err.Error())
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range p.Services {
			if !yield(n) {
				return
			}
		}
	}) {
		s := p.Services[name]
		for _, msg := range checkService(p, s) {
			problems = append(problems, fmt.Sprintf("service %s: %s", name, msg))
		}
	}
	return problems
}

// OneShot reports whether s runs to completion (a set-up step) rather than
// serving: it is not restarted once it has succeeded.
func OneShot(s types.ServiceConfig) bool {
	return s.Restart == "no" || strings.HasPrefix(s.Restart, "on-failure")
}

func checkService(p *types.Project, s types.ServiceConfig) []string {
	var out []string
	out = append(out, checkImage(s)...)
	out = append(out, checkOps(s)...)
	out = append(out, checkPrometheus(p, s)...)
	if !OneShot(s) {
		if s.HealthCheck == nil || s.HealthCheck.Disable || len(s.HealthCheck.Test) == 0 {
			out = append(out, "a long-running service needs a healthcheck")
		}
	}
	for _, dep := range slices.Sorted(func(yield func(string) bool) {
		for n := range s.DependsOn {
			if !yield(n) {
				return
			}
		}
	}) {
		cond := s.DependsOn[dep].Condition
		target, ok := p.Services[dep]
		if !ok {
			out = append(out, fmt.Sprintf("depends on %q, which is not a service in the file", dep))
			continue
		}
		switch {
		case OneShot(target) && cond != types.ServiceConditionCompletedSuccessfully:
			out = append(out, fmt.Sprintf("depends on one-shot %q with condition %q, want %q", dep, cond,
				types.ServiceConditionCompletedSuccessfully))
		case !OneShot(target) && cond != types.ServiceConditionHealthy:
			out = append(out, fmt.Sprintf("depends on %q with condition %q, want %q", dep, cond, types.ServiceConditionHealthy))
		case !OneShot(target) && (target.HealthCheck == nil || target.HealthCheck.Disable):
			out = append(out, fmt.Sprintf("waits for %q to be healthy, but it has no healthcheck", dep))
		}
		if len(target.Profiles) > 0 && len(s.Profiles) == 0 {
			out = append(out, fmt.Sprintf("depends on %q, which is optional (profiles %v): a service that always starts cannot need it",
				dep, target.Profiles))
		}
	}
	out = append(out, checkEnv(p, s)...)
	for _, v := range s.Volumes {
		switch v.Type {
		case types.VolumeTypeBind:
			if _, err := os.Stat(v.Source); err != nil {
				out = append(out, fmt.Sprintf("mounts %s, which does not exist", relTo(p.WorkingDir, v.Source)))
			}
		case types.VolumeTypeVolume:
			if v.Source == "" {
				out = append(out, fmt.Sprintf("anonymous volume at %s: name it", v.Target))
			}
		}
	}
	if s.Build != nil {
		df := s.Build.Dockerfile
		if df == "" {
			df = "Dockerfile"
		}
		if !filepath.IsAbs(df) {
			df = filepath.Join(s.Build.Context, df)
		}
		if _, err := os.Stat(df); err != nil {
			out = append(out, fmt.Sprintf("builds from %s, which does not exist", relTo(p.WorkingDir, df)))
		}
	}
	for _, port := range s.Ports {
		if port.Published != "" && port.HostIP != "127.0.0.1" {
			out = append(out, fmt.Sprintf("publishes %s on %q by default, want 127.0.0.1", port.Published, port.HostIP))
		}
	}
	return out
}

// checkImage requires an image pinned by version: a tag other than latest,
// and for a pulled image a tag that starts with a version number (with or
// without a v), or a digest. An image compose builds here only needs a
// tag.
func checkImage(s types.ServiceConfig) []string {
	if s.Image == "" {
		return []string{"no image"}
	}
	if strings.Contains(s.Image, "@sha256:") {
		return nil
	}
	ref := s.Image[strings.LastIndex(s.Image, "/")+1:]
	_, tag, ok := strings.Cut(ref, ":")
	switch {
	case !ok || tag == "":
		return []string{fmt.Sprintf("image %s is not pinned: no tag", s.Image)}
	case tag == "latest":
		return []string{fmt.Sprintf("image %s is not pinned: latest", s.Image)}
	case s.Build == nil && !startsWithDigit(strings.TrimPrefix(tag, "v")):
		return []string{fmt.Sprintf("image %s is not pinned: tag %q is not a version", s.Image, tag)}
	}
	return nil
}

// Client addresses a service's environment may hold, by how to read their
// host; each must name a service in the file.
var hostVars = map[string]string{
	"AZOLLA_STORE_DSN":               "url",
	"AZOLLA_CONTROL_PLANE_REDIS_URL": "url",
	"AZOLLA_TEMPORAL_ADDRESS":        "hostport",
	"TEMPORAL_ADDRESS":               "hostport",
	"POSTGRES_SEEDS":                 "host",
	"VISIBILITY_POSTGRES_SEEDS":      "host",
	"SQL_HOST":                       "host",
}

// secretish names variables whose value must come from interpolation, not
// from the file.
var secretish = []string{"PASSWORD", "PWD", "SECRET", "TOKEN", "API_KEY"}

func checkEnv(p *types.Project, s types.ServiceConfig) []string {
	var out []string
	keys := EnvKeys()
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range s.Environment {
			if !yield(n) {
				return
			}
		}
	}) {
		val := ""
		if v := s.Environment[name]; v != nil {
			val = *v
		}
		if strings.HasPrefix(name, "AZOLLA_") && !keys[name] {
			out = append(out, fmt.Sprintf("sets %s, which is not an azolla configuration key", name))
		}
		kind, ok := hostVars[name]
		if !ok || val == "" {
			continue
		}
		host, err := hostOf(kind, val)
		if err != nil {
			out = append(out, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		if _, ok := p.Services[host]; !ok {
			out = append(out, fmt.Sprintf("%s names host %q, which is not a service in the file", name, host))
		}
	}
	return out
}

func hostOf(kind, val string) (string, error) {
	switch kind {
	case "url":
		u, err := url.Parse(val)
		if err != nil || u.Hostname() == "" {
			return "", fmt.Errorf("not a URL with a host")
		}
		return u.Hostname(), nil
	case "hostport":
		h, _, err := net.SplitHostPort(val)
		if err != nil {
			return "", fmt.Errorf("not host:port")
		}
		return h, nil
	}
	return val, nil
}

// EnvKeys is the set of AZOLLA_* variables azolla reads: one per leaf of
// its configuration, named as the command line names them (store.dsn ->
// AZOLLA_STORE_DSN). Maps and lists of sections (substrates,
// patch.repositories) are set in the file only.
func EnvKeys() map[string]bool {
	out := map[string]bool{}
	var walk func(prefix string, v reflect.Value)
	walk = func(prefix string, v reflect.Value) {
		t := v.Type()
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("mapstructure"), ",")
			if name == "" || name == "-" {
				continue
			}
			fv := v.Field(i)
			switch {
			case fv.Kind() == reflect.Struct && fv.Type() != reflect.TypeFor[time.Time]():
				walk(prefix+name+".", fv)
			case fv.Kind() == reflect.Map, fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.Struct:
			default:
				out["AZOLLA_"+strings.ToUpper(strings.ReplaceAll(prefix+name, ".", "_"))] = true
			}
		}
	}
	walk("", reflect.ValueOf(config.DefaultFor(func(string) string { return "" })))
	return out
}

// checkInterpolation reads the file as written: every ${VAR} needs a
// default (${VAR:-x}, ${VAR-x}) or must be required (${VAR:?msg}), since
// compose silently turns an unset one into an empty string; a secret-like
// variable's value must come from interpolation. Comment lines are skipped.
func checkInterpolation(raw string) []string {
	var out []string
	for n, line := range strings.Split(raw, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") {
			continue
		}
		for i := 0; i < len(line); i++ {
			if line[i] != '$' || i+1 >= len(line) {
				continue
			}
			next := line[i+1]
			if next == '$' {
				i++
				continue
			}
			braced := next == '{'
			j := i + 1
			if braced {
				j++
			}
			k := j
			for k < len(line) && (line[k] == '_' || line[k] >= 'A' && line[k] <= 'Z' || line[k] >= 'a' && line[k] <= 'z' ||
				k > j && line[k] >= '0' && line[k] <= '9') {
				k++
			}
			if k == j {
				continue
			}
			name := line[j:k]
			guarded := braced && k < len(line) && (strings.ContainsRune("-?+", rune(line[k])) ||
				line[k] == ':' && k+1 < len(line) && strings.ContainsRune("-?+", rune(line[k+1])))
			if !guarded {
				out = append(out, fmt.Sprintf("line %d: $%s has no default: compose turns it into \"\" when unset (use ${%s:-default} or ${%s:?message})",
					n+1, name, name, name))
			}
		}
		item := strings.TrimPrefix(trimmed, "- ")
		sep := ":"
		if eq, colon := strings.Index(item, "="), strings.Index(item, ":"); eq >= 0 && (colon < 0 || eq < colon) {
			sep = "=" // a list item KEY=value
		}
		if key, val, ok := strings.Cut(item, sep); ok {
			key = strings.TrimSpace(key)
			val = strings.TrimSpace(val)
			if key == "" || val == "" || strings.HasPrefix(val, "${") || strings.Contains(key, " ") {
				continue
			}
			for _, s := range secretish {
				if strings.Contains(strings.ToUpper(key), s) {
					out = append(out, fmt.Sprintf("line %d: %s is written in the file: take it from the env file (${%s:?...})", n+1, key, key))
					break
				}
			}
		}
	}
	return out
}

func startsWithDigit(s string) bool { return s != "" && s[0] >= '0' && s[0] <= '9' }

func relTo(base, p string) string {
	if r, err := filepath.Rel(base, p); err == nil {
		return r
	}
	return p
}
