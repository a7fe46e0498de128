package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/lifecycle/budget"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/internal/store"
)

// gatePause is the pause state of verdict j on w, its objective o as the
// verdict's transition left it. A PASS reviews the work, and records the
// spend when the runs went past the objective's budget; a FAIL reviews the
// failure, says when it is the round before's again, and asks for more
// budget before a retry when the budget is spent.
func (a *Steps) gatePause(ctx context.Context, q store.Querier, w *domain.WorkOrder, o *domain.Objective,
	j judgement, rr *domain.RunRecord, keep *pause.Action) (domain.PauseState, error) {
	now := a.now()
	standing, err := budget.Of(ctx, q, o)
	if err != nil {
		return domain.PauseState{}, err
	}
	if j.result == domain.GatePass {
		branch := branchOf(w, rr.CommitSHA)
		url, err := a.openPullRequestURL(ctx, q, rr, o)
		if err != nil {
			return domain.PauseState{}, err
		}
		var spent *pause.Action
		if standing.Exhausted() {
			spent = pause.Overspent(standing)
		}
		return pause.RunCompleteOn(o.ObjectiveID, o.StatusSeq, w.WorkOrderID, branch, url, keep, spent, now), nil
	}
	repeated, err := repeatedFailure(ctx, q, w, j.reason)
	if err != nil {
		return domain.PauseState{}, err
	}
	var partial *domain.PartialWork
	if j.bundle != nil {
		partial = j.bundle.Metadata.Partial
	}
	if j.bundle != nil && j.bundle.RunnerStatus == domain.RunnerQuestion {
		return pause.WithPartialWork(pause.Question(o.ObjectiveID, o.StatusSeq, w.WorkOrderID, j.bundle.Metadata.Question,
			standing, now), partial), nil
	}
	if standing.Exhausted() {
		return pause.WithPartialWork(pause.BudgetSpent(o.ObjectiveID, o.StatusSeq, w.WorkOrderID, j.reason, standing, keep,
			repeated, now), partial), nil
	}
	return pause.WithPartialWork(pause.GateFailed(o.ObjectiveID, o.StatusSeq, w.WorkOrderID, j.reason, keep, repeated, now),
		partial), nil
}

// openPullRequestURL is the URL of the objective's open pull request when
// a PASS goes to one (a later round: the review is there), "" otherwise.
func (a *Steps) openPullRequestURL(ctx context.Context, q store.Querier, rr *domain.RunRecord, o *domain.Objective) (string, error) {
	if !a.wantsPullRequest(rr, o) {
		return "", nil
	}
	pr, err := q.GetPullRequest(ctx, o.ObjectiveID)
	switch {
	case err == nil && pr.State == domain.PullRequestOpen:
		return pr.URL, nil
	case err != nil && !errors.Is(err, domain.ErrNotFound):
		return "", err
	}
	return "", nil
}

// repeatedFailure is the warning that reason fails the same way as the
// objective's round before w, nil when it does not (or there is none).
func repeatedFailure(ctx context.Context, q store.Querier, w *domain.WorkOrder, reason string) (*pause.Action, error) {
	wos, err := q.ListWorkOrders(ctx, store.ListWorkOrdersParams{ObjectiveID: w.ObjectiveID})
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(wos, func(x *domain.WorkOrder) bool { return x.WorkOrderID == w.WorkOrderID })
	if i < 1 {
		return nil, nil
	}
	prev := wos[i-1]
	rr, err := q.GetRunRecord(ctx, prev.WorkOrderID)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if rr.GateResult != domain.GateFail || FailureFingerprint(rr.GateReason) != FailureFingerprint(reason) {
		return nil, nil
	}
	return pause.Repeated(prev.WorkOrderID), nil
}

// Parts of a gate reason that differ between two runs of the same failure.
// hexWords is compiled on first use: its counted repetition is a program of
// about 28 KB that every process would otherwise build at start.
var (
	gateCommand  = regexp.MustCompile(`^gate command ("(?:[^"\\]|\\.)*")`)
	hexWords     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b0x[0-9a-fA-F]+\b|\b[0-9a-f]{7,64}\b`) })
	durations    = regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|us|ms|s|m|h)\b`)
	tempPaths    = regexp.MustCompile(`(/tmp|/var/folders|/private/var)/[^\s:'"]*`)
	numbers      = regexp.MustCompile(`\d+`)
	errorLike    = regexp.MustCompile(`(?i)error|fail|panic|undefined|expected|cannot|not found|denied|exception`)
	spaceRuns    = regexp.MustCompile(`\s+`)
	maxFailLines = 3
)

// FailureFingerprint reduces a gate FAIL reason to what identifies the
// failure across rounds: the failing command and the first error lines of
// its output (or the reason's first line when no command failed), with
// durations, numbers, hashes and temporary paths blanked out. Two rounds
// with the same fingerprint failed the same way.
func FailureFingerprint(reason string) string {
	head, tail, _ := strings.Cut(reason, "\noutput tail:\n")
	var parts []string
	if m := gateCommand.FindStringSubmatch(head); m != nil {
		parts = append(parts, m[1])
	} else {
		first, _, _ := strings.Cut(strings.TrimSpace(head), "\n")
		parts = append(parts, normalize(first))
	}
	var lines []string
	for _, l := range strings.Split(tail, "\n") {
		if l = strings.TrimSpace(l); l != "" && errorLike.MatchString(l) {
			lines = append(lines, normalize(l))
			if len(lines) == maxFailLines {
				break
			}
		}
	}
	parts = append(parts, lines...)
	sum := sha256.Sum256([]byte(strings.Join(parts, "\n")))
	return hex.EncodeToString(sum[:8])
}

func normalize(s string) string {
	s = tempPaths.ReplaceAllString(s, "<tmp>")
	s = hexWords().ReplaceAllString(s, "<hex>")
	s = durations.ReplaceAllString(s, "<t>")
	s = numbers.ReplaceAllString(s, "#")
	return strings.TrimSpace(spaceRuns.ReplaceAllString(s, " "))
}
