package substrate

import (
	"context"
	"database/sql"
)

// WriteInReadOnlyTx runs stmt inside the read-only transaction the queries
// run in, for tests proving it refuses writes.
func WriteInReadOnlyTx(ctx context.Context, s *Substrate, stmt string) error {
	return s.readOnly(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, stmt)
		return err
	})
}
