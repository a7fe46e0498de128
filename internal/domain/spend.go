package domain

import (
	"fmt"
	"math"
	"strconv"
)

// Spend is what a set of runs cost, as their run reports tell. A run that
// ran an agent or a model (its bundle has a run report, or names the
// command or openai generator) counts in Runs; a run whose report has no
// cost, or that wrote none, is also counted in Unknown: unknown is not
// free. A run of the static generator or a built-in rule costs nothing and
// is not counted.
type Spend struct {
	// USD sums the known costs.
	USD float64 `json:"usd"`
	// Runs counts the runs that could cost; Unknown those of them whose
	// cost is not known.
	Runs    int `json:"runs"`
	Unknown int `json:"unknown_cost_runs"`
	// Tokens sums the token counts the reports gave.
	Tokens Tokens `json:"tokens"`
}

// Generators whose runs cost money.
var costlyGenerators = map[string]bool{"command": true, "openai": true}

// Add counts one run by its bundle's metadata.
func (s *Spend) Add(m BundleMetadata) {
	r := m.RunReport
	if r == nil && !costlyGenerators[m.Generator] {
		return
	}
	s.Runs++
	if r == nil || r.CostUSD == nil {
		s.Unknown++
	} else {
		s.USD += *r.CostUSD
	}
	if r != nil && r.Tokens != nil {
		s.Tokens.Input += r.Tokens.Input
		s.Tokens.Output += r.Tokens.Output
		s.Tokens.CacheRead += r.Tokens.CacheRead
		s.Tokens.CacheWrite += r.Tokens.CacheWrite
	}
}

// AddCandidate counts one candidate's run by the rules of Add, as a bundle
// of its generator and report. A SKIPPED candidate never ran and costs
// nothing; a RUNNING or CANCELLED one ran, and counts as what it reported
// (unknown when it reported nothing).
func (s *Spend) AddCandidate(c *Candidate) {
	if c.Status == CandidateSkipped {
		return
	}
	s.Add(BundleMetadata{Generator: c.Generator, RunReport: c.Report})
}

// AddWorkOrder counts one workorder's runs: its candidates when it has any
// (its bundle then repeats the winner's report, which must not count
// twice), else its output bundle (nil: none yet).
func (s *Spend) AddWorkOrder(bundle *BundleMetadata, candidates []*Candidate) {
	if len(candidates) == 0 {
		if bundle != nil {
			s.Add(*bundle)
		}
		return
	}
	for _, c := range candidates {
		s.AddCandidate(c)
	}
}

// String says the spend as a person reads it: "$1.25 over 3 runs (1 of
// unknown cost)", "nothing yet".
func (s Spend) String() string {
	if s.Runs == 0 {
		return "nothing yet"
	}
	return USD(s.USD) + " over " + s.RunsLine()
}

// RunsLine says how many runs were counted: "3 runs (1 of unknown cost)".
func (s Spend) RunsLine() string {
	out := fmt.Sprintf("%d runs", s.Runs)
	if s.Runs == 1 {
		out = "1 run"
	}
	if s.Unknown > 0 {
		out += fmt.Sprintf(" (%d of unknown cost)", s.Unknown)
	}
	return out
}

// USD writes dollars with cents, and more digits only below a cent.
func USD(v float64) string {
	if v != 0 && math.Abs(v) < 0.01 {
		return "$" + strconv.FormatFloat(v, 'f', -1, 64)
	}
	return "$" + strconv.FormatFloat(v, 'f', 2, 64)
}
