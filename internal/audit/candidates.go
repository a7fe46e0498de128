package audit

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
)

// Best-of-N candidates (issue 31): the rules of a workorder's candidate
// patches against its one output bundle.

// loadCandidates reads each workorder's candidates, and, through SQL when
// the store offers it, the workorder ids of every candidate row, those of
// workorders that are gone included.
func (s *state) loadCandidates(ctx context.Context, q store.CandidateQuerier) error {
	s.candidates = map[string][]*domain.Candidate{}
	for _, w := range s.workOrders {
		cs, err := q.ListCandidates(ctx, w.WorkOrderID)
		if err != nil {
			return err
		}
		if len(cs) > 0 {
			s.candidates[w.WorkOrderID] = cs
		}
	}
	db, ok := q.(sqlDB)
	if !ok {
		return nil
	}
	rows, err := countRows(ctx, db.DB(), "candidates")
	if err != nil {
		return err
	}
	s.candidateRows = rows
	return nil
}

// chosenOf returns the workorder's chosen candidates, by attempt.
func chosenOf(cs []*domain.Candidate) []*domain.Candidate {
	var out []*domain.Candidate
	for _, c := range cs {
		if c.Chosen {
			out = append(out, c)
		}
	}
	return out
}

// candidateChosenOnce: a workorder's candidates have at most one chosen,
// and exactly one once the workorder has an output bundle with content
// (the bundle is written from the chosen one; before it the run is
// half-way). A bundle without content says no candidate produced a patch
// (or one asked a question): none was chosen.
func candidateChosenOnce(s *state, r recorder) {
	for _, w := range s.workOrders {
		cs := s.candidates[w.WorkOrderID]
		if len(cs) == 0 {
			continue
		}
		r.checked(1)
		res := "workorder " + w.WorkOrderID
		chosen := chosenOf(cs)
		switch {
		case len(chosen) > 1:
			r.violation(res, "%d candidates are chosen (attempts %s); at most one may be", len(chosen), attempts(chosen))
		case len(chosen) == 0 && s.bundle[w.WorkOrderID] != nil && strings.TrimSpace(s.bundle[w.WorkOrderID].Content) != "":
			r.violation(res, "it has an output bundle but none of its %d candidates is chosen", len(cs))
		}
	}
}

// bundleIsChosenCandidate: the output bundle of a PATCH_DIAZOTROPH
// workorder with candidates whose run ended OK carries the chosen
// candidate's patch. The bundle's content is the diff of the commit on the
// work branch (gitops.Diff) and the candidate's patch is recorded the same
// way, so they are compared as text, forgiving only whitespace at the end
// of lines and blank lines at the end (normalizedPatch); a candidate that
// kept only patch_sha256 is compared by the SHA-256 of the content.
func bundleIsChosenCandidate(s *state, r recorder) {
	for _, w := range s.workOrders {
		b := s.bundle[w.WorkOrderID]
		chosen := chosenOf(s.candidates[w.WorkOrderID])
		if b == nil || len(chosen) != 1 || w.DiazotrophType != patchDiazotroph || b.RunnerStatus != domain.RunnerOK {
			continue // no bundle yet, or candidate-chosen-once reports it
		}
		r.checked(1)
		c := chosen[0]
		res := "output_bundle " + w.WorkOrderID
		if c.Patch == "" && c.PatchSHA256 != "" {
			if got := domain.PatchSHA256(b.Content); got != c.PatchSHA256 {
				r.violation(res, "its content (SHA-256 %s) is not chosen candidate %d's patch (SHA-256 %s)",
					got, c.Attempt, c.PatchSHA256)
			}
			continue
		}
		if normalizedPatch(b.Content) != normalizedPatch(c.Patch) {
			r.violation(res, "its content (%d bytes) is not chosen candidate %d's patch (%d bytes)",
				len(b.Content), c.Attempt, len(c.Patch))
		}
	}
}

// patchDiazotroph is the diazotroph whose bundles carry a patch.
const patchDiazotroph = "PATCH_DIAZOTROPH"

// normalizedPatch drops carriage returns, whitespace at the end of each
// line and blank lines at the end: what a transport or a generator's
// output may add to the same diff. Everything else must match.
func normalizedPatch(p string) string {
	lines := strings.Split(strings.ReplaceAll(p, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// candidateOfWorkOrder: no candidate row outlives, or precedes, its
// workorder (visible only through SQL; the foreign key keeps it so unless
// a writer bypassed it).
func candidateOfWorkOrder(s *state, r recorder) {
	if s.candidateRows == nil {
		for _, cs := range s.candidates {
			r.checked(len(cs))
		}
		return
	}
	ids := make([]string, 0, len(s.candidateRows))
	for id := range s.candidateRows {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		n := s.candidateRows[id]
		r.checked(n)
		if s.workOrder[id] == nil {
			r.violation("workorder "+id, "%d candidate rows name it, but the workorder does not exist", n)
		}
	}
}

// attempts lists candidates' attempt numbers: "1, 3".
func attempts(cs []*domain.Candidate) string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = fmt.Sprint(c.Attempt)
	}
	return strings.Join(out, ", ")
}
