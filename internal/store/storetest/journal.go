package storetest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

// A journal is a History kept in a file, one line per begin, end and drop,
// written as each happens: a process that is killed leaves its operations
// in flight begun and never ended, and the test that loads the file
// (Load) counts them as operations whose outcome is unknown. It is how an
// azolla process of the test's (cmd/azolla built with the azollahistory
// tag) records its store's history.

// JournalEnv names the file an azolla process built with the
// azollahistory tag journals its store's history into.
const JournalEnv = "AZOLLA_TEST_HISTORY"

// journalLine is one line of a journal.
type journalLine struct {
	Op         string         `json:"op"` // begin, end or drop
	ID         int64          `json:"id"`
	Client     string         `json:"client,omitempty"`
	Call       int64          `json:"call,omitempty"`
	Ret        int64          `json:"ret,omitempty"`
	Claim      *ClaimInput    `json:"claim,omitempty"`
	ClaimOut   *ClaimOutput   `json:"claim_out,omitempty"`
	Outcome    *OutcomeInput  `json:"outcome,omitempty"`
	OutcomeOut *OutcomeOutput `json:"outcome_out,omitempty"`
}

// with sets the line's input or output, v.
func (l journalLine) with(v any) journalLine {
	switch v := v.(type) {
	case ClaimInput:
		l.Claim = &v
	case ClaimOutput:
		l.ClaimOut = &v
	case OutcomeInput:
		l.Outcome = &v
	case OutcomeOutput:
		l.OutcomeOut = &v
	}
	return l
}

// Journal starts an empty history that also writes itself to the file at
// path, created or appended to.
func Journal(path string) (*History, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("history journal: %w", err)
	}
	h := NewHistory()
	h.journal = f
	return h, nil
}

// write appends l to the journal, if any, in one write: a kill loses no
// line written before it. Called with h.mu held.
func (h *History) write(l journalLine) {
	if h.journal == nil {
		return
	}
	b, err := json.Marshal(l)
	if err == nil {
		_, err = h.journal.Write(append(b, '\n'))
	}
	if err != nil {
		// A history with a hole would be checked as if whole.
		panic(fmt.Sprintf("storetest: write the history journal %s: %v", h.journal.Name(), err))
	}
}

// Load adds the operations of the journal at path to h: those ended with
// their outcomes, those begun and never ended as pending (unknown). A
// last line cut short by a kill is left out: its operation was not called
// yet (a begin) or stays unknown (an end).
func (h *History) Load(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("load history journal: %w", err)
	}
	defer f.Close()
	h.mu.Lock()
	defer h.mu.Unlock()
	begun := map[int64]int64{} // the journal's ids to h's
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var cut error
	for n := 1; sc.Scan(); n++ {
		if cut != nil {
			return cut // a line cut short that is not the last
		}
		var l journalLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			cut = fmt.Errorf("history journal %s line %d: %w", path, n, err)
			continue
		}
		switch l.Op {
		case "begin":
			var in any
			switch {
			case l.Claim != nil:
				in = *l.Claim
			case l.Outcome != nil:
				in = *l.Outcome
			default:
				return fmt.Errorf("history journal %s line %d: a begin with no input", path, n)
			}
			id := h.next
			h.next++
			h.pending[id] = pendingOp{client: l.Client, in: in, call: l.Call}
			begun[l.ID] = id
		case "end", "drop":
			id, ok := begun[l.ID]
			if !ok {
				return fmt.Errorf("history journal %s line %d: operation %d %s, never begun", path, n, l.ID, l.Op)
			}
			p := h.pending[id]
			delete(h.pending, id)
			delete(begun, l.ID)
			if l.Op == "drop" {
				continue
			}
			var out any
			switch {
			case l.ClaimOut != nil:
				out = *l.ClaimOut
			case l.OutcomeOut != nil:
				out = *l.OutcomeOut
			default:
				return fmt.Errorf("history journal %s line %d: an end with no output", path, n)
			}
			h.add(p, out, l.Ret)
		}
	}
	return sc.Err()
}
