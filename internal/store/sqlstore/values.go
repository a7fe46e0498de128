package sqlstore

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/azolla/azolla/internal/store/sqlcol"
)

// TimeLayout is how SQLite stores timestamps: fixed width, UTC, microseconds,
// so text order is time order and `lease_expires_at <= $n` compares correctly.
const TimeLayout = "2006-01-02T15:04:05.000000Z"

// Time is a timestamp on its way into a column.
type Time = time.Time

// The column scanners of azolla's stored forms (package sqlcol).
func timeCol(t *time.Time) sqlcol.Time          { return sqlcol.Time{T: t} }
func nullTimeCol(t **time.Time) sqlcol.NullTime { return sqlcol.NullTime{T: t} }
func nullStringCol(s *string) sqlcol.NullString { return sqlcol.NullString{S: s} }
func jsonCol(v any) sqlcol.JSON                 { return sqlcol.JSON{V: v} }
func nullFloatCol(f **float64) sqlcol.NullFloat { return sqlcol.NullFloat{F: f} }

// nullFloat stores nil as NULL.
func nullFloat(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

// jsonText encodes v for a JSON column.
func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode json column: %w", err)
	}
	return string(b), nil
}

// nullString stores "" as NULL.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// emptyIfNil keeps JSON arrays as [] rather than null.
func emptyIfNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
