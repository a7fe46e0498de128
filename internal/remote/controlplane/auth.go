package controlplane

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/azolla/azolla/internal/domain"
)

// WorkerTokenPrefix starts every worker token, so a leaked one is easy to
// recognize (and to scan for).
const WorkerTokenPrefix = "azw_"

// GenerateWorkerToken returns a new worker token (the prefix and 256
// random bits, base64url) and the hash to store. The token is shown once;
// only the hash is kept.
func GenerateWorkerToken() (token, hash string, err error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", fmt.Errorf("generate a worker token: %w", err)
	}
	token = WorkerTokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return token, HashWorkerToken(token), nil
}

// HashWorkerToken is the stored form of a token: hex SHA-256. The token
// has 256 random bits, so a plain hash suffices (no salt or stretching:
// there is nothing to guess).
func HashWorkerToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// ErrUnauthenticated: the request carries no valid worker token.
var ErrUnauthenticated = errors.New("missing, unknown or revoked worker token")

// Authenticator says which worker a request comes from.
type Authenticator interface {
	// Authenticate returns the worker the request's credentials were
	// issued to; the request's worker_id must equal it. "" with a nil
	// error accepts any worker_id (AllowUnauthenticated only). An error
	// wrapping ErrUnauthenticated is answered 401.
	Authenticate(r *http.Request) (workerID string, err error)
}

// TokenLookup is the store's side of token authentication.
type TokenLookup interface {
	GetWorkerTokenByHash(ctx context.Context, tokenHash string) (*domain.WorkerToken, error)
}

// TokenAuthenticator authenticates "Authorization: Bearer <token>" against
// the stored hashes of unrevoked worker tokens. Tokens are looked up by
// hash, so no token is ever compared, logged or echoed.
type TokenAuthenticator struct {
	Tokens TokenLookup
}

// Authenticate implements Authenticator.
func (a TokenAuthenticator) Authenticate(r *http.Request) (string, error) {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || !strings.HasPrefix(token, WorkerTokenPrefix) {
		return "", ErrUnauthenticated
	}
	t, err := a.Tokens.GetWorkerTokenByHash(r.Context(), HashWorkerToken(token))
	if errors.Is(err, domain.ErrNotFound) {
		return "", ErrUnauthenticated
	}
	if err != nil {
		return "", fmt.Errorf("look the worker token up: %w", err)
	}
	if t.RevokedAt != nil {
		return "", ErrUnauthenticated
	}
	return t.WorkerID, nil
}

// AllowUnauthenticated accepts every request, whatever its worker_id.
// Only azolla dev may use it, listening on a loopback address (check with
// LoopbackOnly) and saying so when it starts.
var AllowUnauthenticated Authenticator = unauthenticated{}

type unauthenticated struct{}

func (unauthenticated) Authenticate(*http.Request) (string, error) { return "", nil }

// LoopbackOnly refuses a listen address that is not on a loopback
// interface: a control plane without tokens must not be reachable from
// another machine. "localhost" counts; an empty host (every interface)
// does not.
func LoopbackOnly(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	ip := net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("listen address %q: without worker tokens the control plane listens on loopback only (127.0.0.1, ::1, localhost)", addr)
	}
	return nil
}
