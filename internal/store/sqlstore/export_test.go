package sqlstore

import (
	"errors"
	"fmt"
	"strings"
)

// StmtID names a cached statement to mutate.
type StmtID = stmtID

// The cached statements the mutation tests break on purpose.
const (
	StmtAcquire             = stmtAcquire
	StmtRenew               = stmtRenew
	StmtFence               = stmtFence
	StmtAdvanceReviewCursor = stmtAdvanceReviewCursor
)

// MutateStatement replaces the fragment old (in $n form) with new in the
// text of statement id of a store that has not run it yet. A fragment that
// is not in the text is an error, so a mutation that no longer applies is
// noticed instead of testing the unbroken statement.
func MutateStatement(s *Store, id stmtID, old, new string) error {
	if s.stmts.ready.Load() != nil {
		return errors.New("mutate statement: the store has already prepared its statements")
	}
	text, old := s.stmts.text[id], s.d.Rebind(old)
	if !strings.Contains(text, old) {
		return fmt.Errorf("mutate statement: %q is not in %q", old, text)
	}
	s.stmts.text[id] = strings.Replace(text, old, s.d.Rebind(new), 1)
	return nil
}
