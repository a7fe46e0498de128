package controlplane

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
)

func TestGenerateWorkerToken_RandomPrefixedAndHashed(t *testing.T) {
	t.Parallel()
	token, hash, err := GenerateWorkerToken()
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(token, WorkerTokenPrefix))
	require.Len(t, token, len(WorkerTokenPrefix)+43) // 256 bits, base64url
	require.Len(t, hash, 64)
	require.Equal(t, HashWorkerToken(token), hash)
	require.NotContains(t, hash, token)

	other, otherHash, err := GenerateWorkerToken()
	require.NoError(t, err)
	require.NotEqual(t, token, other)
	require.NotEqual(t, hash, otherHash)
}

func TestLoopbackOnly(t *testing.T) {
	t.Parallel()
	for addr, ok := range map[string]bool{
		"127.0.0.1:8090": true,
		"127.3.4.5:0":    true,
		"[::1]:8090":     true,
		"localhost:8090": true,
		":8090":          false,
		"0.0.0.0:8090":   false,
		"[::]:8090":      false,
		"10.0.0.7:8090":  false,
		"example.com:80": false,
		"127.0.0.1":      false, // no port
	} {
		err := LoopbackOnly(addr)
		if ok {
			require.NoError(t, err, addr)
		} else {
			require.Error(t, err, addr)
		}
	}
}

type tokenMap map[string]*domain.WorkerToken

func (m tokenMap) GetWorkerTokenByHash(_ context.Context, hash string) (*domain.WorkerToken, error) {
	if t, ok := m[hash]; ok {
		return t, nil
	}
	return nil, &domain.NotFoundError{Kind: "worker token", ID: hash}
}

type downLookup struct{}

func (downLookup) GetWorkerTokenByHash(context.Context, string) (*domain.WorkerToken, error) {
	return nil, errors.New("connection refused")
}

func TestTokenAuthenticator(t *testing.T) {
	t.Parallel()
	token, hash, err := GenerateWorkerToken()
	require.NoError(t, err)
	a := TokenAuthenticator{Tokens: tokenMap{hash: {WorkerID: workerA, TokenHash: hash}}}
	for header, want := range map[string]string{
		"Bearer " + token:       workerA,
		"bearer " + token:       workerA,
		"":                      "",
		"Bearer":                "",
		"Basic " + token:        "",
		"Bearer " + token + "x": "",
		"Bearer " + strings.TrimPrefix(token, WorkerTokenPrefix): "",
	} {
		r := httptest.NewRequest(http.MethodPost, PathClaim, nil)
		if header != "" {
			r.Header.Set("Authorization", header)
		}
		got, err := a.Authenticate(r)
		if want == "" {
			require.ErrorIs(t, err, ErrUnauthenticated, header)
			continue
		}
		require.NoError(t, err, header)
		require.Equal(t, want, got)
	}

	r := httptest.NewRequest(http.MethodPost, PathClaim, nil)
	r.Header.Set("Authorization", "Bearer "+token)
	_, err = TokenAuthenticator{Tokens: downLookup{}}.Authenticate(r)
	require.Error(t, err)
	require.NotErrorIs(t, err, ErrUnauthenticated, "a store outage is not the worker's fault")
}
