// Package ops serves what operators and orchestrators ask of a running
// azolla process: GET /healthz (alive), GET /readyz (ready to work, or 503
// naming what is not) and GET /metrics (Prometheus exposition). The
// metrics themselves are defined in ops/metrics, beside it.
package ops

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Paths served.
const (
	PathHealth  = "/healthz"
	PathReady   = "/readyz"
	PathMetrics = "/metrics"
)

// checkTimeout bounds one readiness check: an orchestrator's probe times
// out after a few seconds, and a hung dependency is not ready.
const checkTimeout = 2 * time.Second

// Check is one condition of readiness: nil when met.
type Check struct {
	Name  string
	Check func(ctx context.Context) error
}

// Readiness is /readyz's answer.
type Readiness struct {
	Ready bool `json:"ready"`
	// Checks maps each check to "ok" or why it failed.
	Checks map[string]string `json:"checks"`
}

// Ready runs every check, at once, each within checkTimeout.
func Ready(ctx context.Context, checks []Check) Readiness {
	r := Readiness{Ready: true, Checks: make(map[string]string, len(checks))}
	type result struct {
		name string
		err  error
	}
	results := make(chan result, len(checks))
	for _, c := range checks {
		go func() {
			cctx, cancel := context.WithTimeout(ctx, checkTimeout)
			defer cancel()
			results <- result{c.Name, c.Check(cctx)}
		}()
	}
	for range checks {
		res := <-results
		r.Checks[res.name] = "ok"
		if res.err != nil {
			r.Ready, r.Checks[res.name] = false, res.err.Error()
		}
	}
	return r
}

// Handler serves /healthz, /readyz (checks) and /metrics (g).
func Handler(g prometheus.Gatherer, checks []Check) http.Handler {
	mux := http.NewServeMux()
	Register(mux, g, checks, true)
	return mux
}

// Register adds the endpoints to mux; health false leaves /healthz to a
// mux that serves one already.
func Register(mux *http.ServeMux, g prometheus.Gatherer, checks []Check, health bool) {
	if health {
		mux.HandleFunc("GET "+PathHealth, func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
		})
	}
	mux.HandleFunc("GET "+PathReady, func(w http.ResponseWriter, r *http.Request) {
		res := Ready(r.Context(), checks)
		status := http.StatusOK
		if !res.Ready {
			status = http.StatusServiceUnavailable
		}
		writeJSON(w, status, res)
	})
	// A failing collector (the store down) leaves its series out; the
	// others, the SDK's among them, are still served.
	mux.Handle("GET "+PathMetrics, promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
}

// Names lists the checks' names, sorted (for logs).
func Names(checks []Check) []string {
	n := make([]string, 0, len(checks))
	for _, c := range checks {
		n = append(n, c.Name)
	}
	sort.Strings(n)
	return n
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
