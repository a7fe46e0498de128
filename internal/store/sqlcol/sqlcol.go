// Package sqlcol scans azolla's stored column forms, the same on every
// reader of an azolla store (the store itself, the manifest's substrate
// queries): timestamps as native timestamps (PostgreSQL) or RFC 3339 text
// (SQLite), JSON columns as text or jsonb, nullable text as "".
package sqlcol

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// Time scans a timestamp stored as a native timestamp or as RFC 3339 text
// into *T, in UTC.
type Time struct{ T *time.Time }

// Scan implements sql.Scanner.
func (c Time) Scan(src any) error {
	switch v := src.(type) {
	case time.Time:
		*c.T = v.UTC()
		return nil
	case string:
		return c.parse(v)
	case []byte:
		return c.parse(string(v))
	default:
		return fmt.Errorf("scan timestamp: unexpected %T", src)
	}
}

func (c Time) parse(s string) error {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("scan timestamp %q: %w", s, err)
	}
	*c.T = t.UTC()
	return nil
}

// NullTime scans a nullable timestamp into *T (nil for NULL).
type NullTime struct{ T **time.Time }

// Scan implements sql.Scanner.
func (c NullTime) Scan(src any) error {
	if src == nil {
		*c.T = nil
		return nil
	}
	var t time.Time
	if err := (Time{&t}).Scan(src); err != nil {
		return err
	}
	*c.T = &t
	return nil
}

// NullString scans a nullable text column into *S ("" for NULL).
type NullString struct{ S *string }

// Scan implements sql.Scanner.
func (c NullString) Scan(src any) error {
	var ns sql.NullString
	if err := ns.Scan(src); err != nil {
		return err
	}
	*c.S = ns.String
	return nil
}

// JSON scans a JSON column (text or jsonb) into V; NULL leaves V as it is.
type JSON struct{ V any }

// Scan implements sql.Scanner.
func (c JSON) Scan(src any) error {
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
	return json.Unmarshal(b, c.V)
}

// NullFloat scans a nullable number column into *F (nil for NULL).
type NullFloat struct{ F **float64 }

// Scan implements sql.Scanner.
func (c NullFloat) Scan(src any) error {
	var nf sql.NullFloat64
	if err := nf.Scan(src); err != nil {
		return err
	}
	*c.F = nil
	if nf.Valid {
		v := nf.Float64
		*c.F = &v
	}
	return nil
}
