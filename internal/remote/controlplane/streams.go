package controlplane

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// A job runs on the stream of its diazotroph type: the type in lower case
// without the "_DIAZOTROPH" suffix (PATCH_DIAZOTROPH → "patch",
// COMMAND_DIAZOTROPH → "command"). The mapping is one-to-one, so the
// control plane routes a workorder by its type and a remote worker finds
// the streams it can serve from the types its registry runs.

// diazotrophSuffix ends every diazotroph type (schemas/defs.schema.json).
const diazotrophSuffix = "_DIAZOTROPH"

// MaxStreamLen bounds a stream name; a Redis key is built from it.
const MaxStreamLen = 64

var (
	diazotrophTypeRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]*_DIAZOTROPH$`)
	streamRE         = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
)

// ErrInvalidStream is wrapped by ValidateStream's errors.
var ErrInvalidStream = errors.New("invalid stream name")

// StreamFor returns the stream of diazotroph type typ, or "" when typ is not
// a diazotroph type (^[A-Z][A-Z0-9_]*_DIAZOTROPH$) or its stream would be
// longer than MaxStreamLen.
func StreamFor(typ string) string {
	if !diazotrophTypeRE.MatchString(typ) {
		return ""
	}
	s := strings.ToLower(strings.TrimSuffix(typ, diazotrophSuffix))
	if len(s) > MaxStreamLen {
		return ""
	}
	return s
}

// DiazotrophFor is StreamFor's inverse: the diazotroph type whose jobs
// stream carries, or "" when stream is not a valid stream name.
func DiazotrophFor(stream string) string {
	if ValidateStream(stream) != nil {
		return ""
	}
	return strings.ToUpper(stream) + diazotrophSuffix
}

// ValidateStream checks that name is a stream name: 1 to MaxStreamLen
// characters of [a-z0-9_], starting with a letter.
func ValidateStream(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty", ErrInvalidStream)
	case len(name) > MaxStreamLen:
		return fmt.Errorf("%w: %d bytes, at most %d", ErrInvalidStream, len(name), MaxStreamLen)
	case !streamRE.MatchString(name):
		return fmt.Errorf("%w %q: want a lower-case letter, then lower-case letters, digits or _", ErrInvalidStream, name)
	}
	return nil
}
