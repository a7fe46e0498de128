package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"

	"github.com/azolla/azolla/internal/config"
)

const (
	configFileName = "azolla.yaml"
	envPrefix      = "AZOLLA_"
	flagConfig     = "config"
)

// configFlags maps each persistent flag to the config key it sets.
var configFlags = []struct{ flag, key, usage string }{
	{"data-dir", "data_dir", "data directory (default $XDG_DATA_HOME/azolla or ~/.local/share/azolla)"},
	{"store-driver", "store.driver", `store backend: "sqlite" or "postgres" (default "sqlite")`},
	{"store-dsn", "store.dsn", "PostgreSQL URL; visible to other users in the process list, prefer AZOLLA_STORE_DSN"},
	{"log-level", "log.level", `debug, info, warn or error (default "info")`},
	{"temporal-address", "temporal.address", `Temporal frontend host:port (default "127.0.0.1:7233")`},
	{"namespace", "temporal.namespace", `Temporal namespace (default "default")`},
	{"task-queue", "temporal.task_queue", `lifecycle task queue (default "azolla-lifecycle")`},
	{"tls-cert", "temporal.tls.cert_file", "client certificate for mTLS to Temporal (turns TLS on)"},
	{"tls-key", "temporal.tls.key_file", "client key for mTLS to Temporal"},
	{"tls-ca", "temporal.tls.ca_file", "CA bundle to verify Temporal's certificate (turns TLS on)"},
	{"tls-server-name", "temporal.tls.server_name", "server name to verify Temporal's certificate against (turns TLS on)"},
}

func addConfigFlags(fs *pflag.FlagSet) {
	fs.String(flagConfig, "", "config file (default ./"+configFileName+", else <data_dir>/"+configFileName+")")
	for _, f := range configFlags {
		fs.String(f.flag, "", f.usage)
	}
}

// loadConfig builds the effective configuration, highest precedence first:
// flags, AZOLLA_* environment, config file, defaults. Every error is a
// configError.
func (a *app) loadConfig(flags *pflag.FlagSet) (config.Config, error) {
	cfg, err := a.readConfig(flags)
	if err != nil {
		return config.Config{}, configError(err)
	}
	if err := cfg.Validate(); err != nil {
		return config.Config{}, configError(fmt.Errorf("invalid configuration: %w", err))
	}
	return cfg, nil
}

func (a *app) readConfig(flags *pflag.FlagSet) (config.Config, error) {
	v := viper.New()
	defaults := flatten(config.DefaultFor(a.getenv))
	for key, val := range defaults {
		v.SetDefault(key, val)
	}
	for _, f := range configFlags {
		if err := v.BindPFlag(f.key, flags.Lookup(f.flag)); err != nil {
			return config.Config{}, fmt.Errorf("bind flag --%s: %w", f.flag, err)
		}
	}
	// viper's AutomaticEnv reads the process environment; binding through
	// getenv keeps it injectable. Merged as config, env sits above the file
	// (merged again after reading it) and below flags.
	env := envSettings(defaults, a.getenv)
	if err := v.MergeConfigMap(env); err != nil {
		return config.Config{}, fmt.Errorf("apply environment: %w", err)
	}

	path, err := findConfigFile(flags, v.GetString("data_dir"))
	if err != nil {
		return config.Config{}, err
	}
	a.configFile = path
	if path != "" {
		v.SetConfigFile(path)
		v.SetConfigType("yaml") // whatever the extension; JSON is YAML too
		if err := v.ReadInConfig(); err != nil {
			return config.Config{}, fmt.Errorf("read config file %s: %w", path, err)
		}
		if err := v.MergeConfigMap(env); err != nil {
			return config.Config{}, fmt.Errorf("apply environment: %w", err)
		}
		if unknown := unknownKeys(v.AllKeys(), defaults); len(unknown) > 0 {
			return config.Config{}, fmt.Errorf("config file %s: unknown key(s): %s", path, strings.Join(unknown, ", "))
		}
	}

	var cfg config.Config
	hook := viper.DecodeHook(mapstructure.ComposeDecodeHookFunc(
		mapstructure.StringToTimeDurationHookFunc(),
	))
	// UnmarshalExact backs up unknownKeys, e.g. for a section given as a scalar.
	if err := v.UnmarshalExact(&cfg, hook); err != nil {
		// Drop mapstructure's "decoding failed due to the following
		// error(s):" header; what it wraps names each key. It leaves the
		// values out, so a secret cannot leak through here.
		if inner := errors.Unwrap(err); inner != nil {
			err = inner
		}
		return config.Config{}, fmt.Errorf("decode configuration: %w", err)
	}
	if path != "" {
		if err := restoreKeyCase(path, &cfg); err != nil {
			return config.Config{}, err
		}
	}
	return cfg, nil
}

// restoreKeyCase gives the keys of the file's maps (an env section's
// variable names, substrate names) back the case viper folded away: viper
// keys are case-insensitive, so GOFLAGS would reach the sandbox as goflags.
func restoreKeyCase(path string, cfg *config.Config) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read config file %s: %w", path, err)
	}
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("read config file %s: %w", path, err)
	}
	restoreKeys(reflect.ValueOf(cfg).Elem(), doc)
	return nil
}

// restoreKeys walks v, a settable value, alongside doc, the file's
// document for it, renaming each map key to the spelling the file used.
func restoreKeys(v reflect.Value, doc any) {
	switch v.Kind() {
	case reflect.Struct:
		fields, _ := doc.(map[string]any)
		for i := range v.NumField() {
			name, opts, _ := strings.Cut(v.Type().Field(i).Tag.Get("mapstructure"), ",")
			if opts == "squash" {
				restoreKeys(v.Field(i), doc)
			} else if name != "" && name != "-" {
				restoreKeys(v.Field(i), lookupFold(fields, name))
			}
		}
	case reflect.Slice:
		items, _ := doc.([]any)
		for i := range min(v.Len(), len(items)) {
			restoreKeys(v.Index(i), items[i])
		}
	case reflect.Map:
		entries, _ := doc.(map[string]any)
		if v.Type().Key().Kind() != reflect.String || v.IsNil() {
			return
		}
		for spelled, child := range entries {
			folded := reflect.ValueOf(strings.ToLower(spelled))
			val := v.MapIndex(folded)
			if !val.IsValid() {
				continue
			}
			elem := reflect.New(val.Type()).Elem()
			elem.Set(val)
			restoreKeys(elem, child)
			v.SetMapIndex(folded, reflect.Value{})
			v.SetMapIndex(reflect.ValueOf(spelled).Convert(v.Type().Key()), elem)
		}
	}
}

// lookupFold is m[key] ignoring case, as viper reads the file.
func lookupFold(m map[string]any, key string) any {
	for k, child := range m {
		if strings.EqualFold(k, key) {
			return child
		}
	}
	return nil
}

// findConfigFile returns the config file to read, "" for none. An explicit
// --config must exist; the default locations may be empty.
func findConfigFile(flags *pflag.FlagSet, dataDir string) (string, error) {
	if path, _ := flags.GetString(flagConfig); path != "" {
		if _, err := os.Stat(path); err != nil {
			return "", fmt.Errorf("config file: %w", err)
		}
		return path, nil
	}
	candidates := []string{configFileName}
	if dataDir != "" {
		candidates = append(candidates, filepath.Join(dataDir, configFileName))
	}
	for _, p := range candidates {
		_, err := os.Stat(p)
		if err == nil {
			return p, nil
		}
		// ENOTDIR: the data dir is a file, so no config in it; whoever uses
		// the data dir reports that.
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", fmt.Errorf("config file: %w", err)
		}
	}
	return "", nil
}

// envName is the environment variable of a config key: store.dsn ->
// AZOLLA_STORE_DSN.
func envName(key string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// envSettings returns the set AZOLLA_* variables as a nested settings map.
// Empty counts as unset, as with viper's own env binding.
func envSettings(defaults map[string]any, getenv func(string) string) map[string]any {
	out := map[string]any{}
	for key := range defaults {
		val := getenv(envName(key))
		if val == "" {
			continue
		}
		m := out
		parts := strings.Split(key, ".")
		for _, p := range parts[:len(parts)-1] {
			sub, ok := m[p].(map[string]any)
			if !ok {
				sub = map[string]any{}
				m[p] = sub
			}
			m = sub
		}
		var v any = val
		// A list (control_plane.remote_diazotrophs) is written in the
		// environment as its items separated by commas or spaces.
		if _, isList := defaults[key].([]string); isList {
			v = strings.FieldsFunc(val, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
		}
		m[parts[len(parts)-1]] = v
	}
	return out
}

// unknownKeys returns the sorted keys that are neither a config key nor a
// section holding config keys.
func unknownKeys(keys []string, known map[string]any) []string {
	var out []string
	for _, k := range keys {
		if _, ok := known[k]; ok {
			continue
		}
		isSection := false
		for kk, v := range known {
			// A map (substrates) holds keys of its own choosing.
			if strings.HasPrefix(kk, k+".") || (reflect.ValueOf(v).Kind() == reflect.Map && strings.HasPrefix(k, kk+".")) {
				isSection = true
				break
			}
		}
		if !isSection {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// flatten maps every leaf of cfg to its dotted mapstructure key, so each key
// gets a default and an environment variable without a list to keep in sync.
func flatten(cfg config.Config) map[string]any {
	out := map[string]any{}
	var walk func(prefix string, v reflect.Value)
	walk = func(prefix string, v reflect.Value) {
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
			fv := v.Field(i)
			if opts == "squash" {
				walk(prefix, fv)
				continue
			}
			if name == "" || name == "-" {
				continue
			}
			key := prefix + name
			if fv.Kind() == reflect.Struct && fv.Type() != reflect.TypeFor[time.Time]() {
				walk(key+".", fv)
				continue
			}
			out[key] = fv.Interface()
		}
	}
	walk("", reflect.ValueOf(cfg))
	return out
}
