package inbox

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/domain"
)

func TestPages_ReadsPastAFullPageAndEndsOnAnError(t *testing.T) {
	t.Parallel()
	// Rows are ints; a row's cursor is its value as ID, and list returns
	// the rows after it, pageSize at a time, up to n.
	const n = pageSize + 3
	var afters []string
	list := func(fail bool) func(domain.Cursor) ([]int, error) {
		return func(after domain.Cursor) ([]int, error) {
			afters = append(afters, after.ID)
			if fail && after.ID != "" {
				return nil, domain.ErrNotFound
			}
			start := 0
			if after.ID != "" {
				start = len(afters[1:]) * pageSize
			}
			var page []int
			for i := start; i < min(start+pageSize, n); i++ {
				page = append(page, i)
			}
			return page, nil
		}
	}
	cursor := func(i int) domain.Cursor { return domain.Cursor{ID: strconv.Itoa(i)} }

	var got []int
	for row, err := range pages(list(false), cursor) {
		require.NoError(t, err)
		got = append(got, row)
	}
	require.Len(t, got, n)
	require.Equal(t, n-1, got[n-1])
	require.Equal(t, []string{"", strconv.Itoa(pageSize - 1)}, afters)

	afters, got = nil, nil
	var errs []error
	for row, err := range pages(list(true), cursor) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		got = append(got, row)
	}
	require.Len(t, got, pageSize)
	require.Equal(t, []error{domain.ErrNotFound}, errs)
}
