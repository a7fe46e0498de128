// Package starter is azolla's client side: it creates objectives (store
// first, Temporal second), sends the human decisions to their lifecycle,
// queries it, and dials the Temporal cluster for every process.
package starter

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/azolla/azolla/internal/config"
	"github.com/azolla/azolla/internal/tlsfiles"
)

// DialTimeout bounds how long Dial waits for the frontend to answer.
const DialTimeout = 10 * time.Second

// Dial connects to the Temporal frontend of cfg, with TLS and an API key
// when configured, and checks that it answers.
func Dial(ctx context.Context, cfg config.TemporalConfig, log *slog.Logger) (client.Client, error) {
	opts, err := ClientOptions(cfg, log)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, DialTimeout)
	defer cancel()
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		return nil, dialError(cfg, err)
	}
	return c, nil
}

// ClientOptions turns cfg into SDK client options.
func ClientOptions(cfg config.TemporalConfig, log *slog.Logger) (client.Options, error) {
	opts := client.Options{HostPort: cfg.Address, Namespace: cfg.Namespace}
	if log != nil {
		opts.Logger = sdklog.NewStructuredLogger(log)
	}
	switch {
	case cfg.UsesTLS():
		// An API key alone turns TLS on with the system's roots, as the SDK
		// would on its own, but with azolla's minimum version.
		t, err := tlsConfig(cfg.TLS)
		if err != nil {
			return opts, err
		}
		opts.ConnectionOptions.TLS = t
	case cfg.TLS.Disabled:
		// Said explicitly, because the SDK turns TLS on for an API key.
		opts.ConnectionOptions.TLSDisabled = true
		if cfg.APIKey != "" && log != nil {
			log.Warn("temporal.tls.disabled: the API key is sent to Temporal in plaintext", "address", cfg.Address)
		}
	}
	if cfg.APIKey != "" {
		opts.Credentials = client.NewAPIKeyStaticCredentials(cfg.APIKey)
	}
	return opts, nil
}

func tlsConfig(c config.TLSConfig) (*tls.Config, error) {
	t := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.ServerName}
	if c.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("temporal.tls: load client certificate: %w", err)
		}
		t.Certificates = []tls.Certificate{cert}
	}
	if c.CAFile != "" {
		pool, err := tlsfiles.CAPool(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("temporal.tls.ca_file: %w", err)
		}
		t.RootCAs = pool
	}
	return t, nil
}
