package ops

import (
	"log/slog"
	"net/http"
	"time"
)

// Limits bound what one client may hold of a server: a connection, the
// goroutine serving it, and memory for its headers.
type Limits struct {
	// ReadHeader bounds reading a request's headers; Read, the whole
	// request, body included, so a body trickled byte by byte is cut off.
	ReadHeader, Read time.Duration
	// Write bounds the handler and the response from the end of the
	// headers on: it must leave room for the longest answer, a claim's
	// long poll.
	Write time.Duration
	// Idle bounds a kept-alive connection between requests.
	Idle time.Duration
	// MaxHeaderBytes bounds a request's headers.
	MaxHeaderBytes int
}

// DefaultLimits suit a server whose answers are quick: a request must
// arrive within 20 s and its answer leave within 15 s; an idle connection
// is closed after a minute. A server with a long poll adds its wait to
// Write.
var DefaultLimits = Limits{ReadHeader: 10 * time.Second, Read: 20 * time.Second, Write: 15 * time.Second,
	Idle: time.Minute, MaxHeaderBytes: 64 << 10}

// NewServer returns a server of h within l, logging its own errors (a
// client's TLS handshake failing, say) to log at warn.
func NewServer(h http.Handler, log *slog.Logger, l Limits) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: l.ReadHeader, ReadTimeout: l.Read, WriteTimeout: l.Write,
		IdleTimeout: l.Idle, MaxHeaderBytes: l.MaxHeaderBytes, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
}
