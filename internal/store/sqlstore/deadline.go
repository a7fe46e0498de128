package sqlstore

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/azolla/azolla/internal/store"
)

// PastDeadline is the SQL condition on the objectives table that f keeps:
// the deadline (due_at when set, else created_at plus the urgency's SLA) is
// strictly before f.Before. Its placeholders are numbered from $next on, in
// the order of args; the times are encoded as d stores them, so the
// comparison is the database's.
func (d *Dialect) PastDeadline(f store.DeadlineFilter, next int) (cond string, args []any) {
	args = append(args, d.EncodeTime(f.Before))
	bySLA := []string{"FALSE"}
	for _, u := range slices.Sorted(maps.Keys(f.SLA)) {
		args = append(args, u, d.EncodeTime(f.Before.Add(-f.SLA[u])))
		n := next + len(args) - 1
		bySLA = append(bySLA, fmt.Sprintf("(urgency = $%d AND created_at < $%d)", n-1, n))
	}
	return fmt.Sprintf("((due_at IS NOT NULL AND due_at < $%d) OR (due_at IS NULL AND (%s)))",
		next, strings.Join(bySLA, " OR ")), args
}
