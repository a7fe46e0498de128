package storetest

import (
	"context"
	"fmt"
	"strings"

	"github.com/azolla/azolla/internal/store/sqlstore"
)

// MutateFunction replaces every occurrence of the fragment old with new in
// the body of the PostgreSQL function name, in s's database: a guard of
// the claim protocol broken on purpose, for a mutation test. A fragment
// that is not there is an error, so a mutation that no longer applies is
// noticed instead of testing the unbroken function.
func MutateFunction(ctx context.Context, s *sqlstore.Store, name, old, new string) error {
	var def string
	if err := s.DB().QueryRowContext(ctx, `SELECT pg_get_functiondef($1::regproc)`, name).Scan(&def); err != nil {
		return fmt.Errorf("mutate function %s: %w", name, err)
	}
	if !strings.Contains(def, old) {
		return fmt.Errorf("mutate function: %q is not in %q", old, def)
	}
	if _, err := s.DB().ExecContext(ctx, strings.ReplaceAll(def, old, new)); err != nil {
		return fmt.Errorf("mutate function %s: %w", name, err)
	}
	return nil
}

// RemoveExpiryGuard is the mutation every fault scenario must catch: the
// PostgreSQL acquisition no longer checks that the lease it takes over has
// lapsed, so an acquirer takes live claims.
func RemoveExpiryGuard(ctx context.Context, s *sqlstore.Store) error {
	return MutateFunction(ctx, s, "azolla_acquire_claim", "lease_expires_at <= at", "true")
}
