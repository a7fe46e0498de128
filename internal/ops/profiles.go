package ops

import (
	"net/http"
	"net/http/pprof"
	"time"
)

// PathProfiles is where the Go runtime's profiles are served when ops.pprof
// is on: index, profile (CPU), trace, and the named profiles (heap,
// allocs, goroutine, block, mutex, threadcreate).
const PathProfiles = "/debug/pprof/"

// MaxProfileSeconds bounds a CPU profile or trace asked for with ?seconds=.
const MaxProfileSeconds = 300

// ProfileLimits are DefaultLimits with room to write a profile of
// MaxProfileSeconds.
var ProfileLimits = func() Limits {
	l := DefaultLimits
	l.Write += MaxProfileSeconds * time.Second
	return l
}()

// WithProfiles serves the Go runtime's profiles under PathProfiles beside
// h. The command line is not among them: what a process was started with
// is not an operator's profile.
func WithProfiles(h http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", h)
	mux.HandleFunc("GET "+PathProfiles, pprof.Index)
	mux.HandleFunc("GET "+PathProfiles+"profile", pprof.Profile)
	mux.HandleFunc("GET "+PathProfiles+"trace", pprof.Trace)
	mux.HandleFunc("GET "+PathProfiles+"symbol", pprof.Symbol)
	mux.HandleFunc("POST "+PathProfiles+"symbol", pprof.Symbol)
	mux.HandleFunc("GET "+PathProfiles+"cmdline", http.NotFound)
	return mux
}
