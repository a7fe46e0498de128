package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/azolla/azolla/internal/textsafe"
)

// dataMigrations are the Go steps some migrations carry, run after the
// migration's SQL in its transaction, by version.
var dataMigrations = map[int]func(ctx context.Context, tx *sql.Tx, rebind func(string) string) error{
	4: repairSingleLineFields,
}

// repairSingleLineFields rewrites the single-line fields of every objective
// with textsafe.Line where they hold what the schema now refuses. Nothing
// is lost: the escapes say which characters were there.
func repairSingleLineFields(ctx context.Context, tx *sql.Tx, rebind func(string) string) error {
	rows, err := tx.QueryContext(ctx, `SELECT objective_id, title, acceptance_criteria, blockers,
		COALESCE(blocker_ref, ''), COALESCE(repository, '') FROM objectives`)
	if err != nil {
		return fmt.Errorf("read objectives: %w", err)
	}
	type fix struct {
		id, title, criteria, blockers, ref, repo string
	}
	var fixes []fix
	for rows.Next() {
		var f fix
		var criteria, blockers []byte
		if err := rows.Scan(&f.id, &f.title, &criteria, &blockers, &f.ref, &f.repo); err != nil {
			rows.Close()
			return fmt.Errorf("read objectives: %w", err)
		}
		var changed bool
		line := func(s string) string {
			out := textsafe.Line(s)
			changed = changed || out != s
			return out
		}
		lines := func(raw []byte) (string, error) {
			var ss []string
			if err := json.Unmarshal(raw, &ss); err != nil {
				return "", fmt.Errorf("objective %s: %w", f.id, err)
			}
			for i := range ss {
				ss[i] = line(ss[i])
			}
			if ss == nil {
				ss = []string{}
			}
			b, err := json.Marshal(ss)
			return string(b), err
		}
		f.title, f.ref, f.repo = line(f.title), line(f.ref), line(f.repo)
		if f.criteria, err = lines(criteria); err == nil {
			f.blockers, err = lines(blockers)
		}
		if err != nil {
			rows.Close()
			return err
		}
		if changed {
			fixes = append(fixes, f)
		}
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read objectives: %w", err)
	}
	for _, f := range fixes {
		if _, err := tx.ExecContext(ctx, rebind(`UPDATE objectives SET title = $1, acceptance_criteria = $2, blockers = $3,
			blocker_ref = NULLIF($4, ''), repository = NULLIF($5, '') WHERE objective_id = $6`),
			f.title, f.criteria, f.blockers, f.ref, f.repo, f.id); err != nil {
			return fmt.Errorf("repair objective %s: %w", f.id, err)
		}
	}
	return nil
}
