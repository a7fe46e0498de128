//go:build azollahistory

package main

import (
	"fmt"
	"os"
	"time"

	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/storetest"
)

// The tests' recording build: with $AZOLLA_TEST_HISTORY set, every store
// the process opens journals its claim operations, fenced writes and
// outcomes into that file, which a test that SIGKILLs the process reads
// back and checks (integration/faults_kill_test.go); with
// $AZOLLA_TEST_CLOCK_SKEW set too, its claim operations are stamped by a
// clock off by that much. No release is built with this tag.
func init() {
	path := os.Getenv(storetest.JournalEnv)
	if path == "" {
		return
	}
	var skew time.Duration
	if v := os.Getenv(storetest.ClockSkewEnv); v != "" {
		var err error
		if skew, err = time.ParseDuration(v); err != nil {
			fail(fmt.Errorf("%s=%q: %w", storetest.ClockSkewEnv, v, err))
		}
	}
	h, err := storetest.Journal(path)
	if err != nil {
		fail(err)
	}
	storeWrapper = func(s store.Store) store.Store { return storetest.Skewed(h.FullStore(s), skew) }
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "azolla:", err)
	os.Exit(2)
}
