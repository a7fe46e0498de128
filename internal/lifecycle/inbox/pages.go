package inbox

import (
	"iter"

	"github.com/azolla/azolla/internal/domain"
)

// pageSize bounds each store read of the inbox.
const pageSize = 500

// pages yields every row of a cursor-paged listing, reading pageSize rows
// at a time; cursor is the position after a row. A failed read is yielded
// as the last pair.
func pages[T any](list func(after domain.Cursor) ([]T, error), cursor func(T) domain.Cursor) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for after := (domain.Cursor{}); ; {
			page, err := list(after)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, row := range page {
				if !yield(row, nil) {
					return
				}
			}
			if len(page) < pageSize {
				return
			}
			after = cursor(page[len(page)-1])
		}
	}
}

func objectiveCursor(o *domain.Objective) domain.Cursor {
	return domain.Cursor{CreatedAt: o.CreatedAt, ID: o.ObjectiveID}
}

func pauseCursor(p *domain.PauseState) domain.Cursor {
	return domain.Cursor{CreatedAt: p.CreatedAt, ID: p.PauseStateID}
}
