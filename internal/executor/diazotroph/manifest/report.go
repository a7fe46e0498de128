package manifest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/azolla/azolla/internal/textsafe"
)

// Bounds of a report.
const (
	MaxSectionItems = 50
	MaxTopActions   = 10
	maxReasonRunes  = 200
	maxTitleRunes   = 120
	maxURLRunes     = 200
)

// Report is a written manifest.
type Report struct {
	Markdown string
	// TopActions are the report's top actions, one safe line each, most
	// important first: the manifest gate's prioritized actions.
	TopActions []string
	// Notes say what the report could not use.
	Notes []string
}

// rows is the decoded input.
type rows struct {
	objectives map[string]ObjectiveRow
	overdue    []ObjectiveRow
	pauses     []PauseRow
	runs       []RunRow
	prs        []PullRequestRow
	spend      spendRows
	notes      []string
}

func decodeRows[T any](q QueryResult) ([]T, error) {
	out := make([]T, 0, len(q.Rows))
	for i, r := range q.Rows {
		var v T
		if err := json.Unmarshal(r, &v); err != nil {
			return nil, fmt.Errorf("%w: query %s: row %d: %v", ErrInvalidInput, q.Name, i, err)
		}
		out = append(out, v)
	}
	return out, nil
}

func decode(in Input) (rows, error) {
	rs := rows{objectives: map[string]ObjectiveRow{}}
	byName := map[string]QueryResult{}
	for _, q := range in.Queries {
		byName[q.Name] = q
	}
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		if !slices.Contains(queriesRead, name) {
			rs.notes = append(rs.notes, fmt.Sprintf("query %s is not read by this report, ignored", textsafe.Line(name)))
		}
	}
	for _, name := range queriesRead {
		q, ok := byName[name]
		switch {
		case !ok:
			rs.notes = append(rs.notes, fmt.Sprintf("query %s is missing: its sections are incomplete", name))
		case q.Parameters[ParamTableAbsent] == "true":
			rs.notes = append(rs.notes, fmt.Sprintf("query %s: the substrate has no table for it (its store is older): its sections are empty", name))
		}
	}
	// Blocked rows carry the blockers: they override the same objective's
	// row of objectives_by_status.
	for _, name := range []string{QueryObjectivesByStatus, QueryBlockedObjectives} {
		os, err := decodeRows[ObjectiveRow](byName[name])
		if err != nil {
			return rows{}, err
		}
		for _, o := range os {
			rs.objectives[o.ObjectiveID] = o
		}
	}
	var err error
	if rs.overdue, err = decodeRows[ObjectiveRow](byName[QueryOverdueObjectives]); err != nil {
		return rows{}, err
	}
	for _, o := range rs.overdue {
		if o.Deadline == nil {
			return rows{}, fmt.Errorf("%w: query %s: objective %s has no deadline", ErrInvalidInput, QueryOverdueObjectives, textsafe.Line(o.ObjectiveID))
		}
	}
	if rs.pauses, err = decodeRows[PauseRow](byName[QueryHumanPauseStates]); err != nil {
		return rows{}, err
	}
	if rs.runs, err = decodeRows[RunRow](byName[QueryRecentRunRecords]); err != nil {
		return rows{}, err
	}
	if rs.prs, err = decodeRows[PullRequestRow](byName[QueryPullRequests]); err != nil {
		return rows{}, err
	}
	if rs.spend, err = decodeSpend(byName); err != nil {
		return rows{}, err
	}
	return rs, nil
}

var urgencyRank = map[string]int{"CRITICAL": 0, "HIGH": 1, "NORMAL": 2, "LOW": 3}

func rank(urgency string) int {
	if r, ok := urgencyRank[urgency]; ok {
		return r
	}
	return urgencyRank["NORMAL"]
}

// Kinds of top action, in the order they rank at equal urgency.
const (
	actOverdue = iota
	actGateFailed
	actBlocked
	actReview
	actHuman
)

type action struct {
	urgency, kind int
	at            time.Time
	key, text     string
}

// Build writes the report of in. It reads no clock: "now" is in.Now.
func Build(in Input) (Report, error) {
	if err := in.check(); err != nil {
		return Report{}, err
	}
	rs, err := decode(in)
	if err != nil {
		return Report{}, err
	}
	now := in.Now.UTC()
	since := func(t time.Time) bool { return in.LastManifestAt == nil || t.After(*in.LastManifestAt) }
	objs := slices.SortedFunc(maps.Values(rs.objectives), func(a, b ObjectiveRow) int { return strings.Compare(a.ObjectiveID, b.ObjectiveID) })
	byUrgencyThenAge := func(a, b ObjectiveRow) int {
		return cmp.Or(cmp.Compare(rank(a.Urgency), rank(b.Urgency)), a.UpdatedAt.Compare(b.UpdatedAt), strings.Compare(a.ObjectiveID, b.ObjectiveID))
	}

	var b strings.Builder
	b.WriteString("# Manifest\n\n")
	scope := "everything"
	if in.Scope != "" {
		scope = md(in.Scope, maxTitleRunes)
	}
	fmt.Fprintf(&b, "- Scope: %s\n- As of: %s\n", scope, stamp(now))
	if in.LastManifestAt != nil {
		fmt.Fprintf(&b, "- Since the last manifest: %s\n", stamp(*in.LastManifestAt))
	} else {
		b.WriteString("- Since the last manifest: none was written before\n")
	}

	var done, doing, blocked []ObjectiveRow
	for _, o := range objs {
		switch o.Status {
		case "DONE":
			if since(o.UpdatedAt) {
				done = append(done, o)
			}
		case "IN_PROGRESS":
			doing = append(doing, o)
		case "BLOCKED":
			blocked = append(blocked, o)
		}
	}
	slices.SortFunc(done, func(a, b ObjectiveRow) int {
		return cmp.Or(b.UpdatedAt.Compare(a.UpdatedAt), strings.Compare(a.ObjectiveID, b.ObjectiveID))
	})
	section(&b, "Done since the last manifest", done, func(o ObjectiveRow) string {
		return fmt.Sprintf("%s, done %s", item(o), stamp(o.UpdatedAt))
	})
	slices.SortFunc(doing, byUrgencyThenAge)
	section(&b, "In progress", doing, func(o ObjectiveRow) string {
		return fmt.Sprintf("%s, %s, since %s", item(o), urgencyOf(o), stamp(o.UpdatedAt))
	})
	slices.SortFunc(blocked, byUrgencyThenAge)
	section(&b, "Blocked", blocked, func(o ObjectiveRow) string {
		return fmt.Sprintf("%s, %s: %s", item(o), urgencyOf(o), md(blockReason(o), maxReasonRunes))
	})
	overdue := slices.Clone(rs.overdue)
	slices.SortFunc(overdue, func(a, b ObjectiveRow) int {
		return cmp.Or(a.Deadline.Compare(*b.Deadline), strings.Compare(a.ObjectiveID, b.ObjectiveID))
	})
	section(&b, "Overdue", overdue, func(o ObjectiveRow) string {
		return fmt.Sprintf("%s, %s, deadline %s, overdue by %s", item(o), urgencyOf(o), stamp(*o.Deadline), ago(now.Sub(*o.Deadline)))
	})
	var failed []RunRow
	for _, r := range rs.runs {
		if r.GateResult == "FAIL" && since(r.CreatedAt) {
			failed = append(failed, r)
		}
	}
	slices.SortFunc(failed, func(a, b RunRow) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), strings.Compare(a.WorkOrderID, b.WorkOrderID))
	})
	section(&b, "Failed at the gate", failed, func(r RunRow) string {
		return fmt.Sprintf("`%s` for `%s` at %s: %s", textsafe.Line(r.WorkOrderID), textsafe.Line(r.ObjectiveID), stamp(r.CreatedAt), md(r.GateReason, maxReasonRunes))
	})

	waiting := pullRequestSections(&b, rs, since)
	spendSection(&b, rs.spend, since)

	top := topActions(rs, overdue, failed, blocked, waiting, now)
	b.WriteString("\n## Top actions\n\n")
	if len(top) == 0 {
		b.WriteString("_None._\n")
	}
	for i, a := range top {
		fmt.Fprintf(&b, "%d. %s\n", i+1, mdEscape(a))
	}
	sources(&b, in.Queries)
	return Report{Markdown: b.String(), TopActions: top, Notes: rs.notes}, nil
}

func topActions(rs rows, overdue []ObjectiveRow, failed []RunRow, blocked []ObjectiveRow, waiting []PullRequestRow, now time.Time) []string {
	best := map[string]action{}
	offer := func(a action) {
		if cur, ok := best[a.key]; !ok || less(a, cur) {
			best[a.key] = a
		}
	}
	urgencyFor := func(id string) int { return rank(rs.objectives[id].Urgency) }
	for _, o := range overdue {
		offer(action{rank(o.Urgency), actOverdue, *o.Deadline, o.ObjectiveID,
			fmt.Sprintf("Finish or re-plan %s (%s): overdue by %s", line(o.ObjectiveID, 64), line(o.Title, maxTitleRunes), ago(now.Sub(*o.Deadline)))})
	}
	for _, r := range failed {
		if rs.objectives[r.ObjectiveID].Status == "DONE" {
			continue // fixed since
		}
		offer(action{urgencyFor(r.ObjectiveID), actGateFailed, r.CreatedAt, r.ObjectiveID,
			fmt.Sprintf("Review the gate failure of %s for %s: %s", line(r.WorkOrderID, 200), line(r.ObjectiveID, 64), line(r.GateReason, maxReasonRunes))})
	}
	for _, o := range blocked {
		offer(action{rank(o.Urgency), actBlocked, o.UpdatedAt, o.ObjectiveID,
			fmt.Sprintf("Unblock %s (%s): %s", line(o.ObjectiveID, 64), line(o.Title, maxTitleRunes), line(blockReason(o), maxReasonRunes))})
	}
	for _, pr := range waiting {
		offer(reviewAction(pr, urgencyFor(pr.ObjectiveID)))
	}
	for _, p := range rs.pauses {
		key, first := p.ObjectiveID, "Review "+p.Reason
		if key == "" {
			key = "pause:" + p.PauseStateID
		}
		if len(p.PrioritizedActions) > 0 {
			first = p.PrioritizedActions[0]
		}
		who := p.ObjectiveID
		if who == "" {
			who = p.PauseStateID
		}
		offer(action{urgencyFor(p.ObjectiveID), actHuman, p.CreatedAt, key,
			fmt.Sprintf("%s: %s", line(who, 200), line(first, maxReasonRunes))})
	}
	all := slices.SortedFunc(maps.Values(best), func(a, b action) int {
		if less(a, b) {
			return -1
		}
		if less(b, a) {
			return 1
		}
		return 0
	})
	out := make([]string, 0, min(len(all), MaxTopActions))
	for _, a := range all[:min(len(all), MaxTopActions)] {
		out = append(out, a.text)
	}
	return out
}

func less(a, b action) bool {
	return cmp.Or(cmp.Compare(a.urgency, b.urgency), cmp.Compare(a.kind, b.kind), a.at.Compare(b.at), strings.Compare(a.key, b.key), strings.Compare(a.text, b.text)) < 0
}

func blockReason(o ObjectiveRow) string {
	var parts []string
	for _, bl := range o.Blockers {
		if strings.TrimSpace(bl) != "" {
			parts = append(parts, bl)
		}
	}
	if o.BlockerRef != "" {
		parts = append(parts, "ref "+o.BlockerRef)
	}
	if len(parts) == 0 {
		return "no reason recorded"
	}
	return strings.Join(parts, "; ")
}

func section[T any](b *strings.Builder, title string, items []T, format func(T) string) {
	fmt.Fprintf(b, "\n## %s (%d)\n\n", title, len(items))
	if len(items) == 0 {
		b.WriteString("_None._\n")
		return
	}
	for _, it := range items[:min(len(items), MaxSectionItems)] {
		fmt.Fprintf(b, "- %s\n", format(it))
	}
	if n := len(items) - MaxSectionItems; n > 0 {
		fmt.Fprintf(b, "- … and %d more\n", n)
	}
}

func sources(b *strings.Builder, qs []QueryResult) {
	b.WriteString("\n## Sources\n\n")
	qs = slices.Clone(qs)
	slices.SortFunc(qs, func(a, b QueryResult) int { return strings.Compare(a.Name, b.Name) })
	if len(qs) == 0 {
		b.WriteString("_None._\n")
	}
	for _, q := range qs {
		var params []string
		for _, k := range slices.Sorted(maps.Keys(q.Parameters)) {
			params = append(params, k+"="+q.Parameters[k])
		}
		if len(params) == 0 {
			params = []string{"no parameters"}
		}
		hash, err := q.ContentHash()
		if err != nil {
			hash = "unhashable"
		}
		fmt.Fprintf(b, "- %s v%d (%s): %d row(s), %s\n", md(q.Name, 100), q.Version, md(strings.Join(params, ", "), maxReasonRunes), len(q.Rows), hash)
	}
}

func item(o ObjectiveRow) string {
	return fmt.Sprintf("`%s` %s", textsafe.Line(o.ObjectiveID), md(o.Title, maxTitleRunes))
}

func urgencyOf(o ObjectiveRow) string {
	if o.Urgency == "" {
		return "NORMAL"
	}
	return md(o.Urgency, 20)
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// ago renders a duration as days, hours and minutes.
func ago(d time.Duration) string {
	if d < time.Minute {
		return "less than a minute"
	}
	d = d.Truncate(time.Minute)
	days, hours, mins := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour), int(d%time.Hour/time.Minute)
	var parts []string
	if days > 0 {
		parts = append(parts, fmt.Sprintf("%dd", days))
	}
	if hours > 0 {
		parts = append(parts, fmt.Sprintf("%dh", hours))
	}
	if mins > 0 {
		parts = append(parts, fmt.Sprintf("%dm", mins))
	}
	return strings.Join(parts, " ")
}

// line makes s one safe line of at most max runes.
func line(s string, max int) string {
	s = textsafe.Line(strings.TrimSpace(s))
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return strings.TrimSpace(string([]rune(s)[:max-1])) + "…"
}

// md is line with the Markdown punctuation escaped.
func md(s string, max int) string { return mdEscape(line(s, max)) }

var mdReplacer = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`,
	"<", `\<`, ">", `\>`, "|", `\|`, "~", `\~`, "#", `\#`,
)

func mdEscape(s string) string { return mdReplacer.Replace(s) }
