//go:build azollahistory

package main

import (
	"fmt"
	"os"

	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/store/storetest"
)

// The tests' recording build: with $AZOLLA_TEST_HISTORY set, every store
// the process opens journals its claim operations, fenced writes and
// outcomes into that file, which a test that SIGKILLs the process reads
// back and checks (integration/faults_kill_test.go). No release is built
// with this tag.
func init() {
	path := os.Getenv(storetest.JournalEnv)
	if path == "" {
		return
	}
	h, err := storetest.Journal(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "azolla:", err)
		os.Exit(2)
	}
	storeWrapper = func(s store.Store) store.Store { return h.FullStore(s) }
}
