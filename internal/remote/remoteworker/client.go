package remoteworker

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/executor/proc"
	"github.com/azolla/azolla/internal/remote/controlplane"
	"github.com/azolla/azolla/internal/strictjson"
	"github.com/azolla/azolla/internal/textsafe"
	"github.com/azolla/azolla/internal/tlsfiles"
)

// Client defaults.
const (
	// DefaultRequestTimeout bounds one heartbeat, complete or fail request.
	DefaultRequestTimeout = 30 * time.Second
	// ClaimTimeoutMargin is added to a claim's long-poll wait for its HTTP
	// timeout, so that a server answering "nothing" at the end of the wait
	// is not cut off.
	ClaimTimeoutMargin = 10 * time.Second
	// maxResponseBytes bounds a response body; a claim carries the job's
	// payload (workorder, snapshot, objective).
	maxResponseBytes = 64 << 20
	// maxErrorBytes bounds what an error response's body is read for.
	maxErrorBytes = 64 << 10
)

// APIError is a control plane's refusal: the HTTP status and the stable code
// of the control plane's error body (controlplane.Code*). Code is "" when the body
// was not an ErrorResponse (a proxy's 502 page, say).
type APIError struct {
	Status  int
	Code    string
	Message string
}

func (e *APIError) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("control plane answered %d %s: %s", e.Status, http.StatusText(e.Status), e.Message)
	}
	return fmt.Sprintf("control plane answered %d %s: %s", e.Status, e.Code, e.Message)
}

// Transient reports whether a later try may succeed: the server is
// unavailable or failed (5xx), or asked to slow down (408, 429). Every
// other 4xx is an answer a retry cannot change.
func (e *APIError) Transient() bool {
	return e.Status >= 500 || e.Status == http.StatusRequestTimeout || e.Status == http.StatusTooManyRequests
}

// ErrorCode returns the code of the APIError in err's chain, or "".
func ErrorCode(err error) string {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Code
	}
	return ""
}

// refused reports whether err is the control plane's final answer no: an
// APIError that is not transient.
func refused(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && !ae.Transient()
}

// transientError marks a failure to get an answer at all: the connection
// was refused or reset, the request timed out, the body was cut short.
type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

func transient(err error) bool {
	var te *transientError
	var ae *APIError
	return errors.As(err, &te) || errors.As(err, &ae) && ae.Transient()
}

// RetryPolicy is the capped exponential backoff, with jitter, between tries
// of a request that failed transiently. Tries go on until the request's
// context ends: callers bound them (the lease, the shutdown).
type RetryPolicy struct {
	// Initial is the first wait, doubled after each failure up to Max.
	Initial, Max time.Duration
}

// DefaultRetry waits 250 ms, 500 ms, 1 s ... up to 10 s between tries.
var DefaultRetry = RetryPolicy{Initial: 250 * time.Millisecond, Max: 10 * time.Second}

// wait returns the pause before try n+1 (n ≥ 1): "equal jitter", half the
// backoff fixed and half random, so that workers a restart failed
// together do not come back together.
func (p RetryPolicy) wait(n int) time.Duration {
	d := p.Initial
	for i := 1; i < n && d < p.Max; i++ {
		d *= 2
	}
	d = max(min(d, p.Max), time.Millisecond)
	return d/2 + rand.N(d/2+1)
}

// ClientOptions configure a Client.
type ClientOptions struct {
	// BaseURL is the control plane's http:// or https:// URL.
	BaseURL string
	// Token is the worker's bearer token (see ReadTokenFile); it may be
	// empty only for an http control plane on loopback (azolla dev's).
	Token string
	// CAFile is a PEM bundle that verifies an https control plane instead
	// of the system's roots; ServerName overrides the name verified.
	CAFile, ServerName string
	// CertFile and KeyFile, set together, are the client certificate a
	// control plane that requires one (mTLS) is shown.
	CertFile, KeyFile string
	// RequestTimeout bounds one try of heartbeat, complete and fail;
	// default DefaultRequestTimeout.
	RequestTimeout time.Duration
	// Retry is the backoff between tries; zero is DefaultRetry.
	Retry RetryPolicy
	// Log receives a warning for each failed try; nil discards.
	Log *slog.Logger
}

// Client speaks the control plane's worker API to one control plane. It retries
// transient failures (no answer, 5xx, 408, 429) until the call's context
// ends and never retries any other 4xx. It is safe for concurrent use.
type Client struct {
	base    *url.URL
	token   string
	http    *http.Client
	timeout time.Duration
	retry   RetryPolicy
	log     *slog.Logger
}

// NewClient checks o and returns a Client.
func NewClient(o ClientOptions) (*Client, error) {
	base, err := url.Parse(strings.TrimRight(o.BaseURL, "/"))
	if err != nil {
		return nil, fmt.Errorf("control plane URL: %w", err)
	}
	if (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("control plane URL %q: want http://host:port or https://host:port", o.BaseURL)
	}
	if base.User != nil || base.RawQuery != "" || base.Fragment != "" {
		return nil, fmt.Errorf("control plane URL %q: no user info, query or fragment", o.BaseURL)
	}
	// Only `azolla dev`'s control plane, on loopback, serves workers
	// without tokens; no token is sent anywhere else.
	if o.Token == "" && (base.Scheme != "http" || !loopback(base.Hostname())) {
		return nil, errors.New("control plane client: no token (only a control plane on loopback, as azolla dev runs it, may take none)")
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if (o.CertFile == "") != (o.KeyFile == "") {
		return nil, errors.New("control plane client certificate: the certificate and key files must be given together")
	}
	if o.CAFile != "" || o.ServerName != "" || o.CertFile != "" {
		if base.Scheme != "https" {
			return nil, fmt.Errorf("control plane URL %q: a CA file, server name or client certificate needs https", o.BaseURL)
		}
		tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: o.ServerName}
		if o.CertFile != "" {
			cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
			if err != nil {
				return nil, fmt.Errorf("control plane client certificate: %w", err)
			}
			tc.Certificates = []tls.Certificate{cert}
		}
		if o.CAFile != "" {
			pool, err := tlsfiles.CAPool(o.CAFile)
			if err != nil {
				return nil, fmt.Errorf("control plane CA file: %w", err)
			}
			tc.RootCAs = pool
		}
		tr.TLSClientConfig = tc
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if base.Scheme == "http" && !loopback(base.Hostname()) {
		log.Warn("the control plane URL is plain http: the worker's token and its jobs cross the network unencrypted",
			"control_plane", base.Redacted())
	}
	c := &Client{base: base, token: o.Token, timeout: o.RequestTimeout, retry: o.Retry, log: log,
		http: &http.Client{Transport: tr,
			// A redirect would resend the token and the body somewhere
			// else: the control plane's URL is configured, not discovered.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	if c.timeout <= 0 {
		c.timeout = DefaultRequestTimeout
	}
	if c.retry.Initial <= 0 || c.retry.Max <= 0 {
		c.retry = DefaultRetry
	}
	return c, nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// URL is the control plane's base URL.
func (c *Client) URL() string { return c.base.String() }

// Claim long-polls for a job. Its HTTP timeout is the request's wait plus
// ClaimTimeoutMargin.
func (c *Client) Claim(ctx context.Context, req controlplane.ClaimRequest) (*controlplane.ClaimResponse, error) {
	var resp controlplane.ClaimResponse
	timeout := time.Duration(req.MaxWaitMS)*time.Millisecond + ClaimTimeoutMargin
	if err := c.call(ctx, controlplane.PathClaim, timeout, req, &resp); err != nil {
		return nil, err
	}
	if resp.Claimed && (resp.JobID == "" || resp.AttemptID == "" || resp.LeaseToken == "" || resp.Stream == nil) {
		return nil, errors.New("claim: the control plane claimed a job without job_id, attempt_id, lease_token or stream")
	}
	return &resp, nil
}

// Heartbeat extends the job's lease.
func (c *Client) Heartbeat(ctx context.Context, req controlplane.HeartbeatRequest) (*controlplane.HeartbeatResponse, error) {
	var resp controlplane.HeartbeatResponse
	if err := c.call(ctx, controlplane.PathHeartbeat, c.timeout, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// Complete settles the attempt as succeeded.
func (c *Client) Complete(ctx context.Context, req controlplane.CompleteRequest) (*controlplane.CompleteResponse, error) {
	var resp controlplane.CompleteResponse
	if err := c.call(ctx, controlplane.PathComplete, c.timeout, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// Fail settles the attempt as failed.
func (c *Client) Fail(ctx context.Context, req controlplane.FailRequest) (*controlplane.FailResponse, error) {
	var resp controlplane.FailResponse
	if err := c.call(ctx, controlplane.PathFail, c.timeout, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// call POSTs in to path and decodes the answer into out, trying again after
// transient failures until ctx ends. The error of a call given up on
// wraps both the last failure and ctx's.
func (c *Client) call(ctx context.Context, path string, timeout time.Duration, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("%s: encode request: %w", path, err)
	}
	var last error // the last failure that was not ctx's end
	for n := 1; ; n++ {
		err := c.try(ctx, path, timeout, body, out)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			if last == nil || !errors.Is(err, ctx.Err()) {
				last = err
			}
			return fmt.Errorf("%s: %w (gave up: %w)", path, last, context.Cause(ctx))
		}
		if !transient(err) {
			return fmt.Errorf("%s: %w", path, err)
		}
		last = err
		wait := c.retry.wait(n)
		c.log.Warn("control plane request failed, trying again", "path", path, "try", n, "wait", wait,
			"error", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s: %w (gave up: %w)", path, last, context.Cause(ctx))
		case <-t.C:
		}
	}
}

// try is one request.
func (c *Client) try(ctx context.Context, path string, timeout time.Duration, body []byte, out any) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base.JoinPath(path).String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "azolla-remote-worker")
	resp, err := c.http.Do(req)
	if err != nil {
		if refusedClientCertificate(err) {
			return fmt.Errorf("the control plane requires a client certificate signed by a CA it trusts (mTLS); "+
				"give one with --control-plane-cert and --control-plane-key: %w", err)
		}
		if untrusted(err) {
			return err // the same certificate will be refused again
		}
		return &transientError{err}
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return apiError(resp)
	}
	if err := strictjson.Decode(io.LimitReader(resp.Body, maxResponseBytes), out); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || ctx.Err() != nil {
			return &transientError{fmt.Errorf("read response: %w", err)}
		}
		return fmt.Errorf("decode response: %w", err)
	}
	return nil
}

// untrusted reports whether err is a TLS handshake that failed on the
// server's certificate or on a server that does not speak TLS.
func untrusted(err error) bool {
	var verr *tls.CertificateVerificationError
	var rerr tls.RecordHeaderError
	var uerr x509.UnknownAuthorityError
	var herr x509.HostnameError
	var ierr x509.CertificateInvalidError
	return errors.As(err, &verr) || errors.As(err, &rerr) || errors.As(err, &uerr) || errors.As(err, &herr) ||
		errors.As(err, &ierr)
}

// refusedClientCertificate reports whether the server ended the handshake
// over the client's certificate: none given, or none it trusts (Go's client
// sends no certificate the server's CA list rules out). crypto/tls reports
// a received alert as a net.OpError "remote error" around an unexported
// value, so the alert is known by its text (RFC 8446 6.2's names).
func refusedClientCertificate(err error) bool {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "remote error" || op.Err == nil {
		return false
	}
	switch strings.TrimPrefix(op.Err.Error(), "tls: ") {
	case "bad certificate", "certificate unknown", "unknown certificate authority", "certificate required":
		return true
	}
	return false
}

// apiError reads a non-200 answer.
func apiError(resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
	var er controlplane.ErrorResponse
	if err := strictjson.Decode(bytes.NewReader(raw), &er); err == nil && er.Error.Code != "" {
		return &APIError{Status: resp.StatusCode, Code: textsafe.Line(er.Error.Code),
			Message: textsafe.Line(er.Error.Message)}
	}
	msg, _ := proc.Sanitize(bytes.TrimSpace(raw))
	return &APIError{Status: resp.StatusCode, Message: textsafe.Line(proc.CutAtRune(msg, 200))}
}

// ReadTokenFile reads a worker token from path: the file's content, spaces
// and newlines around it trimmed. An empty token is refused. A file that
// its group or others may read or write is used, with a warning on log.
func ReadTokenFile(path string, log *slog.Logger) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("token file %s: not a regular file", path)
	}
	raw, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return "", fmt.Errorf("token file %s: %w", path, err)
	}
	token := strings.TrimSpace(string(raw))
	if token == "" {
		return "", fmt.Errorf("token file %s is empty", path)
	}
	if strings.ContainsFunc(token, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return "", fmt.Errorf("token file %s: the token holds spaces or control characters", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 && log != nil {
		log.Warn("others than its owner may read or change the token file; chmod 600 it", "path", path,
			"mode", fmt.Sprintf("%#o", perm))
	}
	return token, nil
}
