package sqlstore

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// TimeLayout is how SQLite stores timestamps: fixed width, UTC, microseconds,
// so text order is time order and `lease_expires_at <= $n` compares correctly.
const TimeLayout = "2006-01-02T15:04:05.000000Z"

// Time is a timestamp on its way into a column.
type Time = time.Time

// timeCol scans a timestamp stored as a native timestamp or as TimeLayout text.
type timeCol struct{ t *time.Time }

func (c timeCol) Scan(src any) error {
	switch v := src.(type) {
	case time.Time:
		*c.t = v.UTC()
	case string:
		return c.parse(v)
	case []byte:
		return c.parse(string(v))
	default:
		return fmt.Errorf("scan timestamp: unexpected %T", src)
	}
	return nil
}

func (c timeCol) parse(s string) error {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("scan timestamp %q: %w", s, err)
	}
	*c.t = t.UTC()
	return nil
}

// nullTimeCol scans a nullable timestamp into a *time.Time field.
type nullTimeCol struct{ t **time.Time }

func (c nullTimeCol) Scan(src any) error {
	if src == nil {
		*c.t = nil
		return nil
	}
	var t time.Time
	if err := (timeCol{&t}).Scan(src); err != nil {
		return err
	}
	*c.t = &t
	return nil
}

// nullStringCol scans a nullable text column into a string ("" for NULL).
type nullStringCol struct{ s *string }

func (c nullStringCol) Scan(src any) error {
	var ns sql.NullString
	if err := ns.Scan(src); err != nil {
		return err
	}
	*c.s = ns.String
	return nil
}

// jsonCol scans a JSON column (text or jsonb) into v.
type jsonCol struct{ v any }

func (c jsonCol) Scan(src any) error {
	var b []byte
	switch v := src.(type) {
	case string:
		b = []byte(v)
	case []byte:
		b = v
	case nil:
		return nil
	default:
		return fmt.Errorf("scan json: unexpected %T", src)
	}
	return json.Unmarshal(b, c.v)
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
