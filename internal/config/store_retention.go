package config

import "time"

// Store retention (store.retention, store.gc_interval): see
// store.PruneFinishedParams for what it deletes and what it keeps.
const (
	DefaultStoreRetention  = 7 * 24 * time.Hour
	DefaultStoreGCInterval = time.Hour
	// MinStoreRetention keeps every claim and job lease the pass may delete
	// far older than the longest lease (claim.lease_ttl and
	// control_plane.lease_ttl are at most MaxLeaseTTL), so nothing is
	// deleted under a holder that could still be working.
	MinStoreRetention = time.Hour
)

func (s StoreConfig) validateRetention(add func(key, format string, args ...any)) {
	if s.Retention < MinStoreRetention {
		add("store.retention", "must be a duration of at least %s (e.g. 168h for a week), got %s", MinStoreRetention, s.Retention)
	}
	if s.GCInterval < MinGCInterval {
		add("store.gc_interval", "must be a duration of at least %s, got %s", MinGCInterval, s.GCInterval)
	}
}
