package patch

import (
	"fmt"
	"slices"
	"strings"

	"github.com/azolla/azolla/internal/domain"
)

// DiffLines is the normalised size of a unified diff, by which candidates
// that pass as many gate commands are compared: the lines it adds and
// removes inside its hunks, where
//   - the diff's headers (diff --git, index, ---/+++, @@) are not counted;
//   - an added or removed line that is blank, or whitespace only, is not
//     counted;
//   - a removed line and an added line of one hunk that differ only in
//     whitespace (a re-indented line) are not counted;
//   - a binary file counts as one line.
//
// So reformatting makes a patch no larger, and a patch is smaller by
// changing less, not by squeezing its lines.
func DiffLines(diff string) int {
	n := 0
	var removed map[string]int // of the current hunk, by their non-whitespace
	var added []string
	flush := func() {
		for _, a := range added {
			if removed[a] > 0 {
				removed[a]--
				continue
			}
			n++
		}
		for _, c := range removed {
			n += c
		}
		removed, added = map[string]int{}, nil
	}
	inHunk := false
	flush()
	for line := range strings.Lines(diff) {
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, "diff --git "):
			flush()
			inHunk = false
		case strings.HasPrefix(line, "@@"):
			flush()
			inHunk = true
		case !inHunk && (strings.HasPrefix(line, "GIT binary patch") || strings.HasPrefix(line, "Binary files")):
			n++
		case inHunk && (strings.HasPrefix(line, "+") || strings.HasPrefix(line, "-")):
			key := strings.Join(strings.Fields(line[1:]), "")
			switch {
			case key == "":
			case line[0] == '-':
				removed[key]++
			default:
				added = append(added, key)
			}
		}
	}
	flush()
	return n
}

// Choose picks the winner among candidates by evidence
// (docs/patches.md#several-candidates). Only candidates with a patch that
// applied (HasPatch) compete; of those, in order:
//  1. passing all allCommands gate commands beats any failure;
//  2. more gate commands passed;
//  3. a smaller DiffLines;
//  4. an earlier FinishedAt (then the lower index).
//
// winner is an index into cands, -1 when none competes. why is one line
// saying why it won and what the others did (Why). tie is nil unless other
// competitors are exactly tied with the winner on the first three keys:
// then it holds the indexes of them all, the winner's included, in order,
// for the repository's select_command to break (SelectCommand).
func Choose(cands []Candidate, allCommands int) (winner int, why string, tie []int) {
	winner = -1
	for i, c := range cands {
		if c.HasPatch() && (winner < 0 || better(c, cands[winner], allCommands)) {
			winner = i
		}
	}
	if winner < 0 {
		return -1, "No candidate produced a patch that applied: " + figures(cands, -1, allCommands), nil
	}
	w := cands[winner]
	runnerUp := -1
	for i, c := range cands {
		if i == winner || !c.HasPatch() {
			continue
		}
		if tied(c, w, allCommands) {
			tie = append(tie, i)
		}
		if runnerUp < 0 || better(c, cands[runnerUp], allCommands) {
			runnerUp = i
		}
	}
	if len(tie) > 0 {
		tie = append(tie, winner)
		slices.Sort(tie)
	}
	var reason string
	switch {
	case runnerUp < 0:
		reason = "the only candidate with a patch that applied"
	case passedAll(w, allCommands) && !passedAll(cands[runnerUp], allCommands):
		reason = "the only candidate to pass every gate command"
	case w.CommandsPassed != cands[runnerUp].CommandsPassed:
		reason = "the most gate commands passed"
	case w.DiffLines != cands[runnerUp].DiffLines:
		reason = "the smallest diff of those passing as many gate commands"
	default:
		reason = "the earliest to finish of those exactly tied on gate commands and diff size"
	}
	return winner, Why(cands, winner, allCommands, reason), tie
}

// Why is one line: candidate winner won, for reason, with its figures,
// then every other candidate's.
func Why(cands []Candidate, winner, allCommands int, reason string) string {
	return fmt.Sprintf("Candidate %d won (%s): %s; others: %s.", cands[winner].Attempt, reason,
		figure(cands[winner], allCommands), figures(cands, winner, allCommands))
}

// figures lists every candidate's figures but skip's.
func figures(cands []Candidate, skip, allCommands int) string {
	var parts []string
	for i, c := range cands {
		if i != skip {
			parts = append(parts, fmt.Sprintf("candidate %d: %s", c.Attempt, figure(c, allCommands)))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}

// figure is what a candidate scored, or why it did not compete.
func figure(c Candidate, allCommands int) string {
	switch {
	case c.RunnerStatus != "" && c.RunnerStatus != domain.RunnerOK:
		return "no patch that applied (" + c.RunnerStatus + ")"
	case !c.HasPatch():
		return "no patch"
	}
	var failed []string
	for _, g := range c.Gate {
		if !g.Passed {
			failed = append(failed, fmt.Sprintf("%q %s", g.Command, g.Detail))
		}
	}
	s := fmt.Sprintf("%d of %d gate commands passed, %d changed lines", c.CommandsPassed, allCommands, c.DiffLines)
	if len(failed) > 0 {
		s += ", failed " + strings.Join(failed, ", ")
	}
	return s
}

func passedAll(c Candidate, allCommands int) bool { return c.CommandsPassed >= allCommands }

// better reports whether a beats b (both competing).
func better(a, b Candidate, allCommands int) bool {
	if pa, pb := passedAll(a, allCommands), passedAll(b, allCommands); pa != pb {
		return pa
	}
	if a.CommandsPassed != b.CommandsPassed {
		return a.CommandsPassed > b.CommandsPassed
	}
	if a.DiffLines != b.DiffLines {
		return a.DiffLines < b.DiffLines
	}
	return a.FinishedAt.Before(b.FinishedAt)
}

// tied reports whether a and b are equal on every key but the time.
func tied(a, b Candidate, allCommands int) bool {
	return passedAll(a, allCommands) == passedAll(b, allCommands) && a.CommandsPassed == b.CommandsPassed &&
		a.DiffLines == b.DiffLines
}
