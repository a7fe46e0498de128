package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/internal/textsafe"
)

// Bounds of what a snapshot freezes of an earlier attempt (the
// context_snapshot schema's): enough for an agent to see what failed, not
// so much that a chatty build log crowds out the objective.
const (
	maxYieldReason = 8192
	maxYieldOutput = 8192
)

// relatedYields is what the next run of o draws on (docs/protocol/patch-flow.md#the-snapshot's
// related_yield_refs): the newest gated attempt, when it failed, with its
// gate reason and the tail of its output, and the comment of the human
// decision that emitted ev. Without them a retry runs the same generator on
// the same input and repeats its mistake.
func relatedYields(ctx context.Context, q store.Querier, o *domain.Objective, ev *domain.Event) ([]domain.YieldRef, error) {
	var yields []domain.YieldRef
	prev, err := lastGated(ctx, q, o.ObjectiveID, ev.EventID)
	if err != nil {
		return nil, err
	}
	revising, err := revisingPullRequest(ctx, q, o.ObjectiveID, prev)
	if err != nil {
		return nil, err
	}
	// A round whose agent asked a question made no mistake: it is told
	// its question, and the human's comment after it is the answer.
	asked := prev != nil && prev.bundle != nil && prev.bundle.RunnerStatus == domain.RunnerQuestion &&
		prev.bundle.Metadata.Question != ""
	if asked {
		yields = append(yields, domain.YieldRef{Kind: domain.YieldQuestion, Ref: prev.workOrder.WorkOrderID,
			Comment: truncate(prev.bundle.Metadata.Question, maxComment)})
	}
	// A round the environment failed says nothing of the patch: the agent
	// is not told to avoid a mistake it did not make.
	if !asked && prev != nil && prev.record.Blame != domain.BlameEnvironment && (prev.record.GateResult == domain.GateFail || revising) {
		y := domain.YieldRef{Kind: domain.YieldPreviousAttempt, Ref: prev.workOrder.WorkOrderID,
			GateResult: prev.record.GateResult, GateReason: tail(prev.record.GateReason, maxYieldReason)}
		if prev.bundle != nil {
			y.OutputTail = tail(joinNonEmpty(prev.bundle.Notes, prev.bundle.Content), maxYieldOutput)
		}
		yields = append(yields, y)
	}
	if ev.Comment != "" {
		yields = append(yields, domain.YieldRef{Kind: domain.YieldHumanComment, Ref: ev.EventID,
			By: cmpBy(ev.DecidedBy), Comment: ev.Comment})
	}
	return yields, nil
}

type gatedAttempt struct {
	workOrder *domain.WorkOrder
	record    *domain.RunRecord
	bundle    *domain.OutputBundle
}

// lastGated is the objective's newest workorder that has a run record,
// other than the one of eventID; nil if none.
func lastGated(ctx context.Context, q store.Querier, objectiveID, eventID string) (*gatedAttempt, error) {
	wos, err := q.ListWorkOrders(ctx, store.ListWorkOrdersParams{ObjectiveID: objectiveID})
	if err != nil {
		return nil, err
	}
	for _, w := range slices.Backward(wos) {
		if w.EventID == eventID {
			continue
		}
		rr, err := q.GetRunRecord(ctx, w.WorkOrderID)
		if errors.Is(err, domain.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		b, err := q.GetOutputBundle(ctx, w.WorkOrderID)
		if errors.Is(err, domain.ErrNotFound) {
			b, err = nil, nil // a Run that gave up is gated without a bundle
		}
		if err != nil {
			return nil, err
		}
		return &gatedAttempt{workOrder: w, record: rr, bundle: b}, nil
	}
	return nil, nil
}

// writeYields renders the yields into the prompt, where every generator
// reads them: the command agent in its input file, a chat model in its
// prompt, COMMAND_DIAZOTROPH on stdin.
func writeYields(b *strings.Builder, yields []domain.YieldRef) {
	asked := false
	for _, y := range yields {
		switch y.Kind {
		case domain.YieldQuestion:
			asked = true
			fmt.Fprintf(b, "\nIn attempt %s you stopped to ask a human:\n%s\n", y.Ref, indentBlock(y.Comment))
		case domain.YieldHumanComment:
			if asked {
				fmt.Fprintf(b, "\nAnswer from %s:\n%s\n\nGo on with the objective using this answer.\n", y.By, indentBlock(y.Comment))
				continue
			}
			fmt.Fprintf(b, "\nComment from %s on this attempt:\n%s\n", y.By, indentBlock(y.Comment))
		case domain.YieldPreviousAttempt:
			fmt.Fprintf(b, "\nPrevious attempt %s was judged %s by the gate. Do not repeat its mistake.\n", y.Ref, y.GateResult)
			fmt.Fprintf(b, "\nGate reason:\n%s\n", indentBlock(y.GateReason))
			if y.OutputTail != "" {
				fmt.Fprintf(b, "\nEnd of its output:\n%s\n", indentBlock(y.OutputTail))
			}
		}
	}
}

// tail keeps the last max characters of s, saying so when it cut.
func tail(s string, max int) string {
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	const mark = "[... earlier output cut ...]\n"
	keep := max - len([]rune(mark))
	return mark + string(r[len(r)-keep:])
}

func joinNonEmpty(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p = strings.TrimRight(p, "\n"); strings.TrimSpace(p) != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "\n\n")
}

func indentBlock(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

// oneLine folds s onto one line ("; " between its lines) safe to print:
// what single-line fields hold when their text comes from a tool.
func oneLine(s string) string {
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return textsafe.Line(strings.Join(parts, "; "))
}

func cmpBy(by string) string {
	if by == "" {
		return "a reviewer"
	}
	return by
}

// revisingPullRequest says whether the round follows a PASS whose pull
// request is open: a review or a check asked for changes to it, so the
// next run sees the patch it revises, not only what was said of it.
func revisingPullRequest(ctx context.Context, q store.Querier, objectiveID string, prev *gatedAttempt) (bool, error) {
	if prev == nil || prev.record.GateResult != domain.GatePass {
		return false, nil
	}
	pr, err := q.GetPullRequest(ctx, objectiveID)
	if errors.Is(err, domain.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return pr.State == domain.PullRequestOpen, nil
}
