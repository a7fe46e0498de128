package patch

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/executor/diazotroph"
	"github.com/azolla/azolla/internal/executor/proc"
)

// maxTitle keeps bundle titles and commit subjects readable.
const maxTitle = 200

func title(req diazotroph.Request, status string) string {
	prefix := "Patch"
	switch status {
	case domain.RunnerBudgetExhausted:
		prefix = "No patch (budget exhausted)"
	case domain.RunnerStalled:
		prefix = "No patch (stalled)"
	case domain.RunnerStopped:
		prefix = "No patch (stopped)"
	case domain.RunnerQuestion:
		prefix = "No patch (a question for a human)"
	case domain.RunnerApplyFailed:
		prefix = "Patch not applied"
	case domain.RunnerEnvironmentFailed:
		prefix = "No patch (environment failed)"
	}
	return proc.CutAtRune(fmt.Sprintf("%s for %s: %s", prefix, req.Objective.ObjectiveID, oneLine(req.Objective.Title)), maxTitle)
}

// commitMessage is the work branch's commit: the objective's title as the
// subject, then what a reviewer needs to trace it.
func commitMessage(req diazotroph.Request) string {
	o := req.Objective
	var b strings.Builder
	b.WriteString(proc.CutAtRune(oneLine(o.Title), maxTitle))
	b.WriteString("\n\n")
	if len(o.AcceptanceCriteria) > 0 {
		b.WriteString("Acceptance criteria:\n")
		for _, c := range o.AcceptanceCriteria {
			fmt.Fprintf(&b, "- %s\n", oneLine(c))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Azolla-Objective: %s\nAzolla-Workorder: %s\n", o.ObjectiveID, req.WorkOrder.WorkOrderID)
	return b.String()
}

// fileStat is one file of a diff.
type fileStat struct {
	path         string
	added, del   int
	binary, kind string
}

// stats reads the per-file summary of a git diff.
func stats(diff string) []fileStat {
	var out []fileStat
	var cur *fileStat
	inHunk := false
	for line := range strings.Lines(diff) {
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, "diff --git "):
			out = append(out, fileStat{path: diffPath(line), kind: "modified"})
			cur, inHunk = &out[len(out)-1], false
		case cur == nil:
		case strings.HasPrefix(line, "@@"):
			inHunk = true
		case !inHunk && strings.HasPrefix(line, "new file mode"):
			cur.kind = "added"
		case !inHunk && strings.HasPrefix(line, "deleted file mode"):
			cur.kind = "deleted"
		case !inHunk && strings.HasPrefix(line, "rename to "):
			cur.kind, cur.path = "renamed", strings.TrimPrefix(line, "rename to ")
		case !inHunk && (strings.HasPrefix(line, "GIT binary patch") || strings.HasPrefix(line, "Binary files")):
			cur.binary = "binary"
		case inHunk && strings.HasPrefix(line, "+"):
			cur.added++
		case inHunk && strings.HasPrefix(line, "-"):
			cur.del++
		}
	}
	return out
}

// diffPath is the new path of a "diff --git a/x b/x" line (exact for paths
// without " b/" in them, which is all a summary needs).
func diffPath(line string) string {
	rest := strings.TrimPrefix(line, "diff --git ")
	if i := strings.LastIndex(rest, " b/"); i >= 0 {
		return rest[i+3:]
	}
	return rest
}

func summary(files []fileStat) string {
	var b strings.Builder
	added, del := 0, 0
	for _, f := range files {
		added, del = added+f.added, del+f.del
	}
	fmt.Fprintf(&b, "%d file(s) changed, +%d -%d:\n", len(files), added, del)
	for _, f := range files {
		if f.binary != "" {
			fmt.Fprintf(&b, "- %s (%s, binary)\n", f.path, f.kind)
			continue
		}
		fmt.Fprintf(&b, "- %s (%s, +%d -%d)\n", f.path, f.kind, f.added, f.del)
	}
	return b.String()
}

// notes describe the committed change.
func (r *run) notes(diff, generatorNotes string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Committed the %s generator's patch on %s, on top of %s (base branch %s).\n",
		r.genName, r.branch, r.from, cmp.Or(r.req.Snapshot.Metadata.BaseBranch, "unknown"))
	b.WriteString(summary(stats(diff)))
	fmt.Fprintf(&b, "Workspace: %s\n", r.ws)
	if e := r.env.note(); e != "" {
		fmt.Fprintf(&b, "%s\n", e)
	}
	if g := strings.TrimSpace(generatorNotes); g != "" {
		fmt.Fprintf(&b, "\nGenerator: %s\n", g)
	}
	return b.String()
}

// prDescription drafts the pull request: what it is for, each acceptance
// criterion as a box for the reviewer to tick, and the files it touches.
func prDescription(req diazotroph.Request, base, diff string) string {
	o := req.Objective
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\nObjective `%s`, workorder `%s`, based on `%s` at %s.\n",
		oneLine(o.Title), o.ObjectiveID, req.WorkOrder.WorkOrderID,
		cmp.Or(req.Snapshot.Metadata.BaseBranch, "the base branch"), base)
	b.WriteString("\n### Acceptance criteria\n\n")
	if len(o.AcceptanceCriteria) == 0 {
		b.WriteString("None were stated.\n")
	}
	for _, c := range o.AcceptanceCriteria {
		fmt.Fprintf(&b, "- [ ] %s\n", oneLine(c))
	}
	b.WriteString("\n### Changes\n\n")
	b.WriteString(summary(stats(diff)))
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// sanitize makes a generator's raw patch storable: valid UTF-8 without NUL.
func sanitize(s string) string {
	out, _ := proc.Sanitize([]byte(s))
	return out
}
