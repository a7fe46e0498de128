// Package egress is the way out of a sandbox whose network is an
// allowlist: a forward proxy run by the worker, one per run, reached from
// inside the sandbox through a relay (Relay) that listens on the sandbox's
// own loopback and forwards to the proxy's Unix socket, which is all the
// sandbox has of the outside.
//
//	agent ──HTTPS_PROXY=http://127.0.0.1:3128──▶ relay (in the sandbox)
//	      ──unix socket──▶ Proxy (the worker) ──▶ allowed host
//	                                  └──▶ refused: 403, counted, named in the run's notes
//
// The proxy tunnels CONNECT and forwards absolute-URI requests only to the
// hosts allowed. It also serves credentialed hosts without the run ever
// holding their key: the agent's base URL points at
// http://127.0.0.1:3128/__azolla/<host>/…, and the proxy sends the request
// on to https://<host>/… with the key's header added. The key lives in the
// worker, never in the sandbox's environment, files or processes.
package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// PathPrefix starts the path of a request the proxy sends on to a
// credentialed host: /__azolla/<host>/<the host's path>.
const PathPrefix = "/__azolla/"

// Credential is a header the proxy adds to what it sends to Host.
type Credential struct {
	// Host is host or host:port, as the base URL's path names it.
	Host string
	// Header is the header's name; Value its value (the secret, or
	// "Bearer " and the secret).
	Header, Value string
	// Scheme is https (the default), or http for a local endpoint.
	Scheme string
}

// Proxy is one run's way out.
type Proxy struct {
	// Allow are the hosts the run may reach: "api.example.com" (any port),
	// "127.0.0.1:8080" (that port), "*.example.com" (its subdomains).
	Allow       []string
	Credentials []Credential
	// Observe, when set, hears of each request: the host, whether it was
	// refused, and the bytes it carried both ways.
	Observe func(host string, refused bool, bytes int64)

	dialer net.Dialer
	srv    *http.Server
	rt     *http.Transport

	mu       sync.Mutex
	refused  map[string]int
	requests map[string]int
	bytes    map[string]int64
}

// Start answers on l, in the background, until Close.
func (p *Proxy) Start(l net.Listener) {
	p.mu.Lock()
	p.refused, p.requests, p.bytes = map[string]int{}, map[string]int{}, map[string]int64{}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	srv := p.srv
	p.mu.Unlock()
	go func() { _ = srv.Serve(l) }()
}

// Close stops the proxy and every connection it holds.
func (p *Proxy) Close() error {
	p.mu.Lock()
	srv, rt := p.srv, p.rt
	p.mu.Unlock()
	if rt != nil {
		rt.CloseIdleConnections()
	}
	if srv == nil {
		return nil
	}
	return srv.Close()
}

// Refused lists the hosts the run was refused, each with how many times:
// "evil.example.com:443 (2)".
func (p *Proxy) Refused() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, h := range slices.Sorted(maps.Keys(p.refused)) {
		out = append(out, fmt.Sprintf("%s (%d)", h, p.refused[h]))
	}
	return out
}

// Traffic is what the run sent through the proxy, by host allowed.
type Traffic struct {
	Host     string
	Requests int
	Bytes    int64
}

// Traffic lists, host by host, the requests and bytes allowed.
func (p *Proxy) Traffic() []Traffic {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Traffic
	for _, h := range slices.Sorted(maps.Keys(p.requests)) {
		out = append(out, Traffic{Host: h, Requests: p.requests[h], Bytes: p.bytes[h]})
	}
	return out
}

func (p *Proxy) count(host string, refused bool, n int64) {
	p.mu.Lock()
	if refused {
		p.refused[host]++
	} else {
		p.requests[host]++
		p.bytes[host] += n
	}
	observe := p.Observe
	p.mu.Unlock()
	if observe != nil {
		observe(host, refused, n)
	}
}

// Allowed reports whether host (host:port, or a host alone) may be reached
// under allow.
func Allowed(allow []string, host string) bool {
	name, port, err := net.SplitHostPort(host)
	if err != nil {
		name, port = host, ""
	}
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	for _, a := range allow {
		a = strings.ToLower(a)
		an, ap, err := net.SplitHostPort(a)
		if err != nil {
			an, ap = a, ""
		}
		if ap != "" && ap != port {
			continue
		}
		if suffix, ok := strings.CutPrefix(an, "*."); ok {
			if strings.HasSuffix(name, "."+suffix) {
				return true
			}
			continue
		}
		if name == an {
			return true
		}
	}
	return false
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodConnect:
		p.tunnel(w, r)
	case r.URL.IsAbs():
		p.forward(w, r)
	case strings.HasPrefix(r.URL.Path, PathPrefix):
		p.credentialed(w, r)
	default:
		http.Error(w, "azolla's egress proxy: send requests through it as a proxy, or to "+PathPrefix+"<host>/",
			http.StatusBadRequest)
	}
}

// refuse answers a request for a host the run may not reach.
func (p *Proxy) refuse(w http.ResponseWriter, host string) {
	p.count(host, true, 0)
	http.Error(w, "azolla's egress proxy refused "+host+": it is not in the run's allowlist (egress)",
		http.StatusForbidden)
}

// tunnel answers CONNECT to an allowed host with a tunnel to it.
func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if !Allowed(p.Allow, host) {
		p.refuse(w, host)
		return
	}
	up, err := p.dialer.DialContext(r.Context(), "tcp", host)
	if err != nil {
		http.Error(w, "azolla's egress proxy could not reach "+host+": "+err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		_ = up.Close()
		http.Error(w, "tunnel unsupported", http.StatusInternalServerError)
		return
	}
	down, rw, err := hj.Hijack()
	if err != nil {
		_ = up.Close()
		return
	}
	_, _ = rw.WriteString("HTTP/1.1 200 Connection established\r\n\r\n")
	_ = rw.Flush()
	var n int64
	var wg sync.WaitGroup
	wg.Go(func() {
		k, _ := io.Copy(up, rw) // what the client sent, buffered reads included
		n += k
		closeWrite(up)
	})
	k, _ := io.Copy(down, up)
	closeWrite(down)
	wg.Wait()
	_, _ = up.Close(), down.Close()
	p.count(host, false, n+k)
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

// forward sends an absolute-URI request on to an allowed host.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request) {
	host := r.URL.Host
	if r.URL.Port() == "" {
		host = net.JoinHostPort(r.URL.Hostname(), map[string]string{"https": "443"}[r.URL.Scheme]+
			map[string]string{"http": "80"}[r.URL.Scheme])
	}
	if !Allowed(p.Allow, host) {
		p.refuse(w, host)
		return
	}
	target := *r.URL
	p.relay(w, r, host, &target, nil)
}

// credentialed sends /__azolla/<host>/<path> on to a credentialed host
// with its header.
func (p *Proxy) credentialed(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, PathPrefix)
	host, path, _ := strings.Cut(rest, "/")
	i := slices.IndexFunc(p.Credentials, func(c Credential) bool { return strings.EqualFold(c.Host, host) })
	if i < 0 {
		p.refuse(w, host)
		return
	}
	c := p.Credentials[i]
	scheme := c.Scheme
	if scheme == "" {
		scheme = "https"
	}
	target := &url.URL{Scheme: scheme, Host: c.Host, Path: "/" + path, RawQuery: r.URL.RawQuery}
	p.relay(w, r, c.Host, target, &c)
}

// relay sends r on to target and its answer back, counting the bytes; with
// c, c's header replaces whatever the run sent in its place.
func (p *Proxy) relay(w http.ResponseWriter, r *http.Request, host string, target *url.URL, c *Credential) {
	in := &countingBody{ReadCloser: r.Body}
	r.Body = in
	out := &countingWriter{ResponseWriter: w}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = target
			pr.Out.Host = target.Host
			if c != nil {
				pr.Out.Header.Del("Authorization")
				pr.Out.Header.Del("X-Api-Key")
				pr.Out.Header.Set(c.Header, c.Value)
			}
		},
		Transport: p.transport(),
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, "azolla's egress proxy could not reach "+host+": "+err.Error(), http.StatusBadGateway)
		},
	}
	rp.ServeHTTP(out, r)
	p.count(host, false, in.n+out.n)
}

// transport is the proxy's client to the hosts it forwards to: its own
// dialer, never a proxy of the worker's.
func (p *Proxy) transport() http.RoundTripper {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rt == nil {
		p.rt = &http.Transport{DialContext: p.dialer.DialContext, ForceAttemptHTTP2: true,
			TLSHandshakeTimeout: 30 * time.Second, IdleConnTimeout: time.Minute}
	}
	return p.rt
}

type countingBody struct {
	io.ReadCloser
	n int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	return n, err
}

// countingWriter counts what an answer carries, flushing as the proxy
// asks (a model's streamed answer).
type countingWriter struct {
	http.ResponseWriter
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	c.n += int64(n)
	return n, err
}

func (c *countingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// ErrNoSocket is what Listen says of a socket path that is too long.
var ErrNoSocket = errors.New("socket path too long")

// Listen listens on the Unix socket at path, which must not exist.
func Listen(ctx context.Context, path string) (net.Listener, error) {
	if len(path) >= 104 {
		return nil, fmt.Errorf("egress socket %s: %w (at most 103 bytes)", path, ErrNoSocket)
	}
	var lc net.ListenConfig
	return lc.Listen(ctx, "unix", path)
}
