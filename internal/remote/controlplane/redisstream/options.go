package redisstream

import (
	"fmt"
	"time"

	"github.com/azolla/azolla/internal/remote/controlplane"
)

// Defaults of Options.
const (
	DefaultURL    = "redis://127.0.0.1:6379/0"
	DefaultPrefix = "azolla:"
	DefaultGroup  = "azolla-control-plane"
	// DefaultMaxLen bounds each stream (approximately: MAXLEN ~).
	DefaultMaxLen = 100_000
	// DefaultReadTimeout leaves room above controlplane.MaxClaimWait for
	// the longest BLOCK.
	DefaultReadTimeout = controlplane.MaxClaimWait + 5*time.Second
)

// Options configures a Transport. Zero values take the defaults.
type Options struct {
	// URL is a redis:// or rediss:// URL (go-redis ParseURL syntax).
	URL string
	// Prefix starts every key this transport writes.
	Prefix string
	// Group is the consumer group every control-plane instance joins.
	Group string
	// MaxLen bounds each stream's length (approximate trimming).
	MaxLen int64
	// LeaseTTL is the control plane's lease TTL; MinIdle must exceed it.
	LeaseTTL time.Duration
	// MinIdle is how long a delivered, unacknowledged message waits before
	// another consumer may take it over (XAUTOCLAIM). Default 2×LeaseTTL.
	MinIdle time.Duration
	// ReadTimeout is the client's socket read timeout; the long-poll's
	// BLOCK is kept below it. Zero takes the URL's read_timeout, or
	// DefaultReadTimeout.
	ReadTimeout time.Duration
}

func (o Options) withDefaults() (Options, error) {
	if o.URL == "" {
		o.URL = DefaultURL
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.Group == "" {
		o.Group = DefaultGroup
	}
	if o.MaxLen <= 0 {
		o.MaxLen = DefaultMaxLen
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = controlplane.DefaultLeaseTTL
	}
	if o.MinIdle <= 0 {
		o.MinIdle = 2 * o.LeaseTTL
	}
	if o.MinIdle <= o.LeaseTTL {
		return o, fmt.Errorf("redis transport: min-idle %s must exceed the lease TTL %s", o.MinIdle, o.LeaseTTL)
	}
	if o.MinIdle < time.Millisecond {
		return o, fmt.Errorf("redis transport: min-idle %s is below Redis's millisecond resolution", o.MinIdle)
	}
	return o, nil
}

// blockCap is the longest BLOCK that still returns before a socket read
// with readTimeout gives up: a BLOCK at or above it would surface as an
// i/o timeout instead of an empty read. go-redis does lengthen the read
// deadline of blocking commands, but a caller's context deadline does not,
// so the cap is kept whatever the client does. readTimeout <= 0 is no
// timeout (go-redis's -1 and -2).
func blockCap(readTimeout time.Duration) time.Duration {
	c := controlplane.MaxClaimWait
	if readTimeout > 0 {
		margin := min(time.Second, readTimeout/2)
		c = min(c, readTimeout-margin)
	}
	return c
}
