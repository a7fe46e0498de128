package domain

import (
	"time"
)

// Cursor is a keyset position in (created_at, id) order: a page starts
// strictly after it. The zero Cursor comes before every row.
type Cursor struct {
	CreatedAt time.Time
	ID        string
}
