package runreport

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"sync"

	"github.com/azolla/azolla/internal/domain"
)

// aiderUsage matches the usage line aider prints after each model call
// (aider/coders/base_coder.py, testdata/SOURCES.md), e.g.
//
//	Tokens: 2.3k sent, 1.1k cache write, 5.2k cache hit, 156 received. Cost: $0.0081 message, $0.0123 session.
//
// The cache parts appear only when non-zero; the Cost part only when aider
// knows the model's price. Compiled on first use: its six groups are a
// program of about 20 KB that every process would otherwise build at start.
var aiderUsage = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`Tokens: ([0-9.]+[kKmM]?) sent` +
		`(?:, ([0-9.]+[kKmM]?) cache write)?` +
		`(?:, ([0-9.]+[kKmM]?) cache hit)?` +
		`, ([0-9.]+[kKmM]?) received\.` +
		`(?:\s+Cost: \$([0-9.]+) message, \$([0-9.]+) session\.)?`)
})

// aiderModel matches the startup announcement of the main model, e.g.
// "Main model: anthropic/claude-sonnet-4-5 with diff edit format" (older
// versions say "Model:").
var aiderModel = regexp.MustCompile(`^(?:Main model|Model): (\S+)`)

// maxTokenCount is the schema's bound on one token count.
const maxTokenCount = 1_000_000_000_000

// ParseAider derives a report from the output of
// `aider --message-file … --yes-always`: the main model of its startup
// lines, and its "Tokens: … Cost: …" lines, one per model call. The counts
// of a line are that call's, so they are added up (aider prints them
// rounded: "2.3k" is read as 2300); the session cost is aider's running
// total, so the last line's is the run's. Aider includes cache writes in
// "sent"; the report's input excludes them.
func ParseAider(out []byte) (domain.RunReport, error) {
	var r domain.RunReport
	var tok domain.Tokens
	calls := int64(0)
	for line := range bytes.SplitSeq(out, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if m := aiderModel.FindSubmatch(line); m != nil && r.Model == "" {
			r.Model = string(m[1])
		}
		m := aiderUsage().FindSubmatch(line)
		if m == nil {
			continue
		}
		var counts [4]int64
		for i, g := range [][]byte{m[1], m[2], m[3], m[4]} {
			n, err := parseAiderCount(g)
			if err != nil {
				return domain.RunReport{}, fmt.Errorf("aider output: %q: %w", line, err)
			}
			counts[i] = n
		}
		sent, write, hit, received := counts[0], counts[1], counts[2], counts[3]
		tok.Input += max(sent-write, 0)
		tok.CacheWrite += write
		tok.CacheRead += hit
		tok.Output += received
		if tok.Input > maxTokenCount || tok.Output > maxTokenCount ||
			tok.CacheRead > maxTokenCount || tok.CacheWrite > maxTokenCount {
			return domain.RunReport{}, fmt.Errorf("aider output: token counts exceed %d", int64(maxTokenCount))
		}
		calls++
		if len(m[6]) > 0 {
			cost, err := strconv.ParseFloat(string(m[6]), 64)
			if err != nil {
				return domain.RunReport{}, fmt.Errorf("aider output: session cost %q: %w", m[6], err)
			}
			r.CostUSD = ptr(cost)
		}
	}
	if calls == 0 {
		return domain.RunReport{}, errors.New(`aider output: no "Tokens: … received." line`)
	}
	r.Tokens = &tok
	r.Turns = calls
	return finish(r, domain.ReportFromAider)
}

// parseAiderCount reads one of aider's token figures: an integer, or a
// decimal with a k (thousand) or M (million) suffix. An absent figure is 0.
func parseAiderCount(b []byte) (int64, error) {
	if len(b) == 0 {
		return 0, nil
	}
	s, mult := string(b), 1.0
	switch s[len(s)-1] {
	case 'k', 'K':
		s, mult = s[:len(s)-1], 1e3
	case 'm', 'M':
		s, mult = s[:len(s)-1], 1e6
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("token count %q: %w", b, err)
	}
	v := math.Round(f * mult)
	if v > maxTokenCount {
		return 0, fmt.Errorf("token count %q exceeds %d", b, int64(maxTokenCount))
	}
	return int64(v), nil
}
