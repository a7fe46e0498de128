// Package redistest finds the Redis server tests run against and gives
// each test keys of its own.
package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultURL is the test server unless AZOLLA_TEST_REDIS_URL says
// otherwise.
const DefaultURL = "redis://127.0.0.1:6379/0"

// URL returns the test server's URL once it answers a PING. When it does
// not, the test fails under CI=true and is skipped elsewhere, saying why.
func URL(t testing.TB) string {
	t.Helper()
	raw := os.Getenv("AZOLLA_TEST_REDIS_URL")
	if raw == "" {
		raw = DefaultURL
	}
	err := ping(raw)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Redis at %s is required under CI=true and is unreachable: %v", redact(raw), err)
		}
		t.Skipf("Redis at %s is unreachable (%v); start it or set AZOLLA_TEST_REDIS_URL", redact(raw), err)
	}
	return raw
}

// URLWithDB is URL on logical database db, for a test that must flush
// its database (FLUSHDB): no other test's keys may live there.
func URLWithDB(t testing.TB, db int) string {
	t.Helper()
	u, err := url.Parse(URL(t))
	if err != nil {
		t.Fatalf("parse Redis URL: %v", err)
	}
	u.Path = "/" + strconv.Itoa(db)
	return u.String()
}

// Prefix returns a key prefix no other test uses ("azolla-test:<hex>:") and
// deletes every key under it when the test ends.
func Prefix(t testing.TB, rawURL string) string {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	prefix := "azolla-test:" + hex.EncodeToString(b) + ":"
	t.Cleanup(func() {
		opts, err := redis.ParseURL(rawURL)
		if err != nil {
			t.Errorf("parse Redis URL: %v", err)
			return
		}
		rdb := redis.NewClient(opts)
		defer rdb.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			rdb.Del(ctx, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Errorf("delete test keys %s*: %v", prefix, err)
		}
	})
	return prefix
}

func ping(raw string) error {
	opts, err := redis.ParseURL(raw)
	if err != nil {
		return err
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return rdb.Ping(ctx).Err()
}

func redact(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	return raw
}
