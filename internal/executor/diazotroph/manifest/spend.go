package manifest

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/domain"
)

// Labels of the spend groups that have no name of their own.
const (
	// tasksRepository groups the runs of a track's workorders (triage,
	// manifest): they belong to no objective, so to no repository.
	tasksRepository = "(tasks)"
	noRepository    = "(no repository)"
	noModel         = "(model not reported)"
	maxModelRunes   = 100
)

// Metadata is the bundle metadata the row was read from, as far as
// store.Spend.Add reads it.
func (r SpendRow) Metadata() domain.BundleMetadata {
	m := domain.BundleMetadata{Generator: r.Generator}
	if rr := r.RunReport; rr != nil {
		m.RunReport = &domain.RunReport{Model: rr.Model, CostUSD: rr.CostUSD, Tokens: rr.Tokens}
	}
	return m
}

// Counts reports whether store.Spend.Add counts the row's run: a run that
// could cost. The substrate keeps only those.
func (r SpendRow) Counts() bool {
	var s domain.Spend
	s.Add(r.Metadata())
	return s.Runs > 0
}

// spendRows is the decoded run_spend query.
type spendRows struct {
	// read says the input has the query: without it the spend is not
	// known, which is not the same as nothing spent.
	read bool
	rows []SpendRow
	// capped says the substrate read only its newest limit bundles.
	capped bool
	limit  string
}

func decodeSpend(byName map[string]QueryResult) (spendRows, error) {
	q, ok := byName[QueryRunSpend]
	rows, err := decodeRows[SpendRow](q)
	if err != nil {
		return spendRows{}, err
	}
	return spendRows{read: ok, rows: rows, capped: q.Parameters["truncated"] == "true", limit: q.Parameters["limit"]}, nil
}

type spendGroup struct {
	label string
	spend domain.Spend
}

// spendSection writes what the runs of the period spent (since says
// whether a time is in it): a total, then by repository and by model, the
// costliest first. The sums are store.Spend's: a run of unknown cost is
// counted and shown as such, never as free.
func spendSection(b *strings.Builder, sr spendRows, since func(time.Time) bool) {
	b.WriteString("\n## Spend since the last manifest\n\n")
	if !sr.read {
		fmt.Fprintf(b, "_Not known: query %s is missing._\n", QueryRunSpend)
		return
	}
	var total domain.Spend
	byRepo, byModel := map[string]*domain.Spend{}, map[string]*domain.Spend{}
	add := func(groups map[string]*domain.Spend, label string, m domain.BundleMetadata) {
		if groups[label] == nil {
			groups[label] = &domain.Spend{}
		}
		groups[label].Add(m)
	}
	for _, r := range sr.rows {
		if !since(r.CreatedAt) || !r.Counts() {
			continue
		}
		m := r.Metadata()
		total.Add(m)
		add(byRepo, repositoryLabel(r), m)
		add(byModel, modelLabel(r), m)
	}
	fmt.Fprintf(b, "- Total: %s\n", spendText(total))
	if sr.capped {
		n := "its newest"
		if sr.limit != "" {
			n += " " + md(sr.limit, 20)
		}
		fmt.Fprintf(b, "- Capped: the substrate gave only %s runs of its lookback; older runs of the period are not counted, so the figures are a lower bound\n", n)
	}
	spendGroups(b, "By repository", byRepo)
	spendGroups(b, "By model", byModel)
}

func spendGroups(b *strings.Builder, title string, groups map[string]*domain.Spend) {
	fmt.Fprintf(b, "\n### %s (%d)\n\n", title, len(groups))
	if len(groups) == 0 {
		b.WriteString("_None._\n")
		return
	}
	list := make([]spendGroup, 0, len(groups))
	for _, label := range slices.Sorted(maps.Keys(groups)) {
		list = append(list, spendGroup{label, *groups[label]})
	}
	slices.SortStableFunc(list, func(a, b spendGroup) int {
		return cmp.Or(cmp.Compare(b.spend.USD, a.spend.USD), cmp.Compare(b.spend.Runs, a.spend.Runs))
	})
	for _, g := range list[:min(len(list), MaxSectionItems)] {
		fmt.Fprintf(b, "- %s: %s\n", g.label, spendText(g.spend))
	}
	if n := len(list) - MaxSectionItems; n > 0 {
		fmt.Fprintf(b, "- … and %d more\n", n)
	}
}

// repositoryLabel is the row's repository as safe Markdown, or what stands
// for it.
func repositoryLabel(r SpendRow) string {
	switch {
	case r.ObjectiveID == "":
		return tasksRepository
	case strings.TrimSpace(r.Repository) == "":
		return noRepository
	}
	return md(r.Repository, maxURLRunes)
}

// modelLabel is the model the run report names, as safe Markdown: text an
// agent wrote, so one bounded line.
func modelLabel(r SpendRow) string {
	if r.RunReport == nil || strings.TrimSpace(r.RunReport.Model) == "" {
		return noModel
	}
	return md(r.RunReport.Model, maxModelRunes)
}

// spendText says a spend: its dollars (a lower bound when some runs are of
// unknown cost, "cost unknown" when all are), its runs, its tokens.
func spendText(s domain.Spend) string {
	if s.Runs == 0 {
		return "nothing recorded"
	}
	var out string
	switch {
	case s.Unknown == 0:
		out = s.String()
	case s.Unknown == s.Runs:
		out = "cost unknown over " + domain.Spend{Runs: s.Runs}.RunsLine() + " (none reported a cost)"
	default:
		out = "at least " + s.String()
	}
	t := s.Tokens
	if t == (domain.Tokens{}) {
		return out + "; no tokens reported"
	}
	return fmt.Sprintf("%s; tokens: %d input, %d output, %d cache read, %d cache write", out, t.Input, t.Output, t.CacheRead, t.CacheWrite)
}
