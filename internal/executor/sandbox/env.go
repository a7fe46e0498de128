package sandbox

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// envName is what a variable's name may be.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// reservedNames are variables azolla sets for every run itself.
var reservedNames = []string{"HOME", "TMPDIR"}

// postgresCredentials are the PostgreSQL client variables that azolla's own
// store connection reads (pgx honours them), so they are azolla's secrets
// wherever they are set.
var postgresCredentials = []string{"PGPASSWORD", "PGPASSFILE", "PGSERVICEFILE", "PGSSLKEY", "PGSSLPASSWORD"}

// VarPrefix starts the names of azolla's own configuration variables and of
// a run's descriptors.
const VarPrefix = "AZOLLA_"

// CheckName says why name cannot be passed to a run, by pass_env or env,
// or returns nil when it can.
func CheckName(name string) error {
	switch {
	case !envName.MatchString(name):
		return fmt.Errorf("%q is not a variable name (letters, digits and _, not starting with a digit)", name)
	case strings.HasPrefix(strings.ToUpper(name), VarPrefix):
		return fmt.Errorf("%s cannot be passed: AZOLLA_* variables hold azolla's own configuration, which never reaches a run, "+
			"and the run's descriptors, which azolla sets itself", name)
	case slices.Contains(postgresCredentials, strings.ToUpper(name)):
		return fmt.Errorf("%s cannot be passed: azolla's store connection reads it, so it is azolla's secret", name)
	case slices.Contains(reservedNames, name):
		return fmt.Errorf("%s cannot be set: azolla gives every run a private %s (use home: for a HOME of your own)", name, name)
	}
	return nil
}

// baseNames are the worker's variables every run gets, and basePrefixes the
// families of them.
var (
	baseNames    = []string{"PATH", "LANG", "LANGUAGE", "TZ"}
	basePrefixes = []string{"LC_"}
)

// defaultPath is PATH for a run when the worker has none.
const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// baseEnv returns the base variables of a run, from the worker's
// environment lookup.
func baseEnv(environ []string, home, tmp string) []string {
	var out []string
	hasPath := false
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if slices.Contains(baseNames, k) || slices.ContainsFunc(basePrefixes, func(p string) bool { return strings.HasPrefix(k, p) }) {
			out = append(out, kv)
			hasPath = hasPath || k == "PATH"
		}
	}
	if !hasPath {
		out = append(out, "PATH="+defaultPath)
	}
	return append(out, "HOME="+home, "TMPDIR="+tmp, "TERM=dumb")
}

// lookup returns the value of name in environ, the last one if repeated.
func lookup(environ []string, name string) (string, bool) {
	for i := len(environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(environ[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// checkVars refuses descriptors that are not AZOLLA_* assignments: they
// come from azolla's own code, so this is a programming error.
func checkVars(vars []string) error {
	for _, kv := range vars {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(k, VarPrefix) || !envName.MatchString(k) {
			return fmt.Errorf("run descriptor %q is not an AZOLLA_* assignment", kv)
		}
	}
	return nil
}
