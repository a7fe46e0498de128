package gitea

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/azolla/azolla/internal/forge"
)

// Options name one repository on one Gitea or Forgejo, and the token that
// reaches it.
type Options struct {
	// BaseURL is the forge's root, as a browser opens it
	// (https://gitea.example.com, or with a path prefix); the API is under
	// /api/v1 there. It carries no credentials.
	BaseURL string
	Owner   string
	Repo    string
	// Token is an access token with write access to the repository and
	// its issues (scopes write:repository and write:issue).
	Token string
	// HTTPClient sends the requests; nil: one with a 30 s timeout.
	HTTPClient *http.Client
	// PageSize is the number of items per page of a listing; zero or more
	// than MaxPageSize: MaxPageSize.
	PageSize int
}

// MaxPageSize is the most items a page of Gitea's (and Forgejo's) API
// holds by default ([api] MAX_RESPONSE_ITEMS); asking for more gets no
// more.
const MaxPageSize = 50

// defaultRetryAfter is the wait a 429 without Retry-After asks for.
const defaultRetryAfter = time.Minute

// maxMessage bounds the forge's message quoted in an error.
const maxMessage = 200

// Forge is one repository on a Gitea or Forgejo.
type Forge struct {
	api      string // the API's root URL, without a trailing slash
	repoPath string // /repos/{owner}/{repo}, escaped
	owner    string
	repo     string
	token    string
	client   *http.Client
	pageSize int
	// openMu serialises OpenOrAdopt: two calls of one process never race
	// to create (see doc.go for racing processes).
	openMu sync.Mutex
}

var _ forge.Forge = (*Forge)(nil)

// New returns the forge of opts.
func New(opts Options) (*Forge, error) {
	base, err := url.Parse(strings.TrimRight(opts.BaseURL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("gitea: base URL %q is not an http(s) URL", opts.BaseURL)
	}
	if base.User != nil {
		return nil, errors.New("gitea: the base URL carries credentials; pass the token as Token")
	}
	if opts.Owner == "" || opts.Repo == "" {
		return nil, errors.New("gitea: owner and repository are required")
	}
	if opts.Token == "" {
		return nil, errors.New("gitea: a token is required")
	}
	f := &Forge{api: base.JoinPath("api", "v1").String(), owner: opts.Owner, repo: opts.Repo, token: opts.Token,
		client: opts.HTTPClient, pageSize: opts.PageSize,
		repoPath: "/repos/" + url.PathEscape(opts.Owner) + "/" + url.PathEscape(opts.Repo)}
	if f.client == nil {
		f.client = &http.Client{Timeout: 30 * time.Second}
	}
	if f.pageSize <= 0 || f.pageSize > MaxPageSize {
		f.pageSize = MaxPageSize
	}
	return f, nil
}

// apiError is a non-2xx answer. It unwraps to forge.ErrNotFound or
// forge.ErrUnauthorized when it is one of those.
type apiError struct {
	method, path string
	status       int
	message      string
	kind         error
}

func (e *apiError) Error() string {
	s := fmt.Sprintf("gitea: %s %s: %d %s", e.method, e.path, e.status, http.StatusText(e.status))
	if e.message != "" {
		s += ": " + e.message
	}
	if e.kind != nil {
		s += ": " + e.kind.Error()
	}
	return s
}

func (e *apiError) Unwrap() error { return e.kind }

// hasStatus reports whether err is an answer with the given status.
func hasStatus(err error, status int) bool {
	var e *apiError
	return errors.As(err, &e) && e.status == status
}

// do sends one request to path (under /api/v1, escaped, with query) and
// decodes a 2xx answer's JSON into out when out is not nil. It returns the
// answer's headers.
func (f *Forge) do(ctx context.Context, method, path string, query url.Values, in, out any) (http.Header, error) {
	target := f.api + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("gitea: %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, fmt.Errorf("gitea: %s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "token "+f.token)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "azolla")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := f.client.Do(req)
	if err != nil {
		// url.Error names the URL, which holds no credentials.
		return nil, fmt.Errorf("gitea: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, fmt.Errorf("gitea: %s %s: read the answer: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, f.failure(method, path, resp, raw)
	}
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return nil, fmt.Errorf("gitea: %s %s: decode the answer: %w", method, path, err)
		}
	}
	return resp.Header, nil
}

// failure turns a non-2xx answer into the error callers branch on.
func (f *Forge) failure(method, path string, resp *http.Response, raw []byte) error {
	msg := f.message(raw)
	retryAfter, limited := retryAfter(resp.Header)
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || (resp.StatusCode == http.StatusForbidden && limited):
		if !limited {
			retryAfter = defaultRetryAfter
		}
		return &forge.RateLimitError{RetryAfter: retryAfter,
			Message: fmt.Sprintf("gitea: %s %s: %d: %s", method, path, resp.StatusCode, msg)}
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return &apiError{method: method, path: path, status: resp.StatusCode, message: msg, kind: forge.ErrUnauthorized}
	case resp.StatusCode == http.StatusNotFound:
		return &apiError{method: method, path: path, status: resp.StatusCode, message: msg, kind: forge.ErrNotFound}
	}
	return &apiError{method: method, path: path, status: resp.StatusCode, message: msg}
}

// message is the forge's explanation of a failure, on one line, cut short,
// and with the token masked should a server ever echo it.
func (f *Forge) message(raw []byte) string {
	var body struct {
		Message string `json:"message"`
	}
	msg := string(raw)
	if json.Unmarshal(raw, &body) == nil && body.Message != "" {
		msg = body.Message
	}
	msg = strings.Join(strings.Fields(msg), " ")
	msg = strings.ReplaceAll(msg, f.token, "[token]")
	if len(msg) > maxMessage {
		msg = strings.ToValidUTF8(msg[:maxMessage], "") + "…"
	}
	return msg
}

// retryAfter reads Retry-After, in seconds or as an HTTP date.
func retryAfter(h http.Header) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(time.Until(at), 0), true
	}
	return 0, false
}

// maxPages stops a listing whose server ignores the page parameter.
const maxPages = 1000

// list reads every page of a listing at path, handing each page's items to
// each. Gitea states the total in X-Total-Count, but a page may hold
// fewer items than asked for without being the last: the server cuts
// pages to its own maximum, and leaves out of a page what the token may
// not see (another user's pending review) while counting it in the total.
// So list stops once it has read the total, or at an empty page that lies
// past the total even at the smallest page size seen; without a total, at
// an empty page.
func list[T any](ctx context.Context, f *Forge, path string, query url.Values, each func([]T) error) error {
	q := url.Values{}
	for k, v := range query {
		q[k] = v
	}
	q.Set("limit", strconv.Itoa(f.pageSize))
	read, largest := 0, 1
	for page := 1; page <= maxPages; page++ {
		q.Set("page", strconv.Itoa(page))
		var items []T
		h, err := f.do(ctx, http.MethodGet, path, q, nil, &items)
		if err != nil {
			return err
		}
		total, err := strconv.Atoi(h.Get("X-Total-Count"))
		known := err == nil
		if len(items) == 0 {
			// largest is at most the server's page size, so the pages up
			// to this one cover at least page*largest of the total.
			if !known || page*largest >= total {
				return nil
			}
			continue
		}
		if err := each(items); err != nil {
			return err
		}
		read += len(items)
		largest = max(largest, len(items))
		if known && read >= total {
			return nil
		}
	}
	return fmt.Errorf("gitea: GET %s: more than %d pages", path, maxPages)
}
