package intake

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/lifecycle/budget"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/starter"
	"github.com/azolla/azolla/workflows"
)

var zeroTime time.Time

// maxRetryText bounds the words of a retry taken into a round.
const maxRetryText = 4000

// threads reads, for each of the repository's objectives still at work,
// the comments on its issue and on its pull request, and brings its status
// comment up to date.
func (s *Service) threads(ctx context.Context, r *Repository, c *Counts) error {
	items, err := s.Store.ListIntakeItems(ctx, store.ListIntakeItemsParams{Source: r.Source})
	if err != nil {
		return err
	}
	for _, it := range items {
		if it.Kind != domain.IntakeObjective {
			continue
		}
		if err := s.thread(ctx, r, it, c); err != nil {
			var rl *forge.RateLimitError
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.As(err, &rl) {
				return err // the forge asked to slow down: the repository's turn ends
			}
			c.Failed++
			s.log().Warn("forge intake: objective", "repository", r.Slug, "issue", it.ExternalID,
				"objective", it.ObjectiveID, "error", err)
		}
	}
	return nil
}

// thread is one objective's turn.
func (s *Service) thread(ctx context.Context, r *Repository, it *domain.IntakeItem, c *Counts) error {
	number, err := strconv.Atoi(it.ExternalID)
	if err != nil {
		return fmt.Errorf("issue number %q: %w", it.ExternalID, err)
	}
	st, err := s.standing(ctx, it.ObjectiveID)
	if err != nil {
		return err
	}
	prOpen := st.pr != nil && st.pr.State == domain.PullRequestOpen
	// At work: not closed nor rejected, and not DONE unless its pull
	// request is still open for review (a PASS is DONE while reviewed).
	if !it.Closed && !rejected(st.pauses) && (st.o.Status != domain.StatusDone || prOpen) {
		before := c.Commands
		if err := s.comments(ctx, r, it, forge.Thread{Number: number}, c); err != nil {
			return err
		}
		if prOpen {
			if err := s.comments(ctx, r, it, forge.Thread{Number: st.pr.Number, Pull: true}, c); err != nil {
				return err
			}
		}
		if c.Commands != before { // a command may have moved it
			if st, err = s.standing(ctx, it.ObjectiveID); err != nil {
				return err
			}
		}
	}
	return s.status(ctx, r, it, st, number, c)
}

func rejected(pauses []*domain.PauseState) bool {
	for _, p := range pauses {
		if p.Reason == domain.PauseRejected {
			return true
		}
	}
	return false
}

// comments reads a thread's comments since its cursor and carries out the
// commands among them.
func (s *Service) comments(ctx context.Context, r *Repository, it *domain.IntakeItem, thread forge.Thread, c *Counts) error {
	key := r.Source + "|" + thread.String()
	raw, err := s.Store.IntakeCursor(ctx, key)
	if err != nil {
		return err
	}
	var since time.Time
	if raw != "" {
		if since, err = time.Parse(cursorLayout, raw); err != nil {
			return fmt.Errorf("comment cursor of %s: %w", key, err)
		}
	}
	comments, err := r.Forge.Comments(ctx, thread, since)
	if err != nil {
		return fmt.Errorf("read the comments of %s: %w", thread, err)
	}
	newest := since
	for _, cm := range comments {
		if err := s.comment(ctx, r, it, thread, cm, c); err != nil {
			break // read again from here next pass
		}
		if cm.CreatedAt.After(newest) {
			newest = cm.CreatedAt
		}
	}
	if newest.Equal(since) {
		return nil
	}
	return s.Store.SetIntakeCursor(ctx, key, newest.UTC().Format(cursorLayout), s.now())
}

// command is a parsed "/azolla" comment.
type command struct {
	name string
	// arg is what follows the name, the comment's further lines included.
	arg string
}

// parseCommand reads the command a comment gives: its first non-blank
// line starts with "/azolla" and a command's name. ok is false for any
// other comment; name is "" for "/azolla" followed by no known command.
func parseCommand(body string) (command, bool) {
	body = strings.TrimLeft(body, " \t\r\n")
	rest, ok := strings.CutPrefix(body, "/azolla")
	if !ok || (rest != "" && !strings.ContainsAny(rest[:1], " \t\r\n")) {
		return command{}, false
	}
	rest = strings.TrimLeft(rest, " \t")
	name, arg, _ := strings.Cut(rest, " ")
	if nl := strings.IndexAny(name, "\r\n"); nl >= 0 {
		name, arg = name[:nl], name[nl:]+" "+arg
	}
	switch name = strings.ToLower(name); name {
	case domain.CommandApprove, domain.CommandReject, domain.CommandRetry, domain.CommandAnswer, domain.CommandBudget,
		domain.CommandStatus:
		return command{name: name, arg: strings.TrimSpace(arg)}, true
	}
	return command{}, true
}

// comment carries out one comment's command, once: a comment recorded
// already is skipped. An error leaves it unrecorded, to be read again.
func (s *Service) comment(ctx context.Context, r *Repository, it *domain.IntakeItem, thread forge.Thread, cm forge.Comment, c *Counts) error {
	if hasMarker(cm.Body) || cm.ID == "" {
		return nil
	}
	cmd, ok := parseCommand(cm.Body)
	if !ok {
		return nil
	}
	var nf *domain.NotFoundError
	if _, err := s.Store.GetForgeCommand(ctx, r.Source, cm.ID); !errors.As(err, &nf) {
		return err // recorded (nil), or the store failed
	}
	v, err := r.Trust.Check(ctx, cm.Author)
	if err != nil {
		return err
	}
	rec := &domain.ForgeCommand{Source: r.Source, CommentID: cm.ID, ObjectiveID: it.ObjectiveID, Thread: thread.String(),
		Command: cmd.name, Argument: oneLine(cmd.arg, 2000), Author: oneLine(cm.Author, 255), Trusted: v.Trusted,
		TrustReason: oneLine(v.Reason, 400), CreatedAt: s.now()}
	if cmd.name == "" {
		rec.Command, rec.Result = domain.CommandStatus, "unknown command: "+oneLine(firstLine(cm.Body), 200)
	}
	var reply string
	switch {
	case !v.Trusted:
		rec.Result = "refused: " + rec.TrustReason
		reply = fmt.Sprintf("@%s only people who may write to %s give azolla commands (%s); nothing was changed.",
			cm.Author, r.Slug, escapeMarkdown(rec.TrustReason))
		s.observeCommand(rec.Command, "untrusted")
	case cmd.name == "":
		reply = "azolla's commands are `/azolla approve`, `/azolla reject <reason>`, `/azolla retry <what to do " +
			"differently>`, `/azolla answer <your answer>`, `/azolla budget +N` and `/azolla status`."
		s.observeCommand("unknown", "refused")
	default:
		var err error
		if reply, err = s.carryOut(ctx, r, it, cmd, cm, rec); err != nil {
			s.observeCommand(cmd.name, "failed")
			return err
		}
		if rec.Result == "" { // recorded with the change itself
			c.Commands++
			return s.answer(ctx, r, thread, cm, reply)
		}
	}
	// Answered first, recorded last: a pass that dies between the two
	// finds its answer by the marker, and the decision's update id makes
	// the lifecycle take it once.
	if err := s.answer(ctx, r, thread, cm, reply); err != nil {
		return err
	}
	if _, err := s.Store.RecordForgeCommand(ctx, rec); err != nil {
		return err
	}
	c.Commands++
	return nil
}

// carryOut does a trusted command and sets rec.Result; or, for a change
// recorded in its own transaction, records rec and leaves Result empty.
// An error is one to try again (the forge or Temporal not answering).
func (s *Service) carryOut(ctx context.Context, r *Repository, it *domain.IntakeItem, cmd command, cm forge.Comment,
	rec *domain.ForgeCommand) (reply string, err error) {
	switch cmd.name {
	case domain.CommandStatus:
		st, err := s.standing(ctx, it.ObjectiveID)
		if err != nil {
			return "", err
		}
		rec.Result = "status told"
		s.observeCommand(cmd.name, "done")
		return s.statusText(ctx, r, st, it.Closed)
	case domain.CommandBudget:
		return s.budget(ctx, it, cmd, rec)
	}
	if cmd.name == domain.CommandApprove {
		// The text, edited after this approval was written, is not
		// what its author approved (both times are the forge's).
		if it.EditedAt != nil && it.EditedAt.After(cm.CreatedAt) {
			rec.Result = "refused: the issue was edited after this approval"
			s.observeCommand(cmd.name, "refused")
			return "The issue was edited after this approval: read it again, and approve it with a new comment.", nil
		}
	}
	kind := map[string]string{domain.CommandApprove: workflows.Approve, domain.CommandReject: workflows.Reject,
		domain.CommandRetry: workflows.Retry, domain.CommandAnswer: workflows.Retry}[cmd.name]
	text, fresh := cmd.arg, false
	if cmd.name == domain.CommandRetry {
		// "/azolla retry --fresh …": the round starts from the snapshot's
		// commit, not from the round before's partial work.
		if rest, ok := strings.CutPrefix(text, "--fresh"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\n') {
			text, fresh = strings.TrimSpace(rest), true
		}
	}
	if len(text) > maxRetryText {
		text = text[:maxRetryText]
	}
	res, err := s.Decider.DecideOnce(ctx, it.ObjectiveID, kind, requestID(r.Source, "comment", cm.ID),
		workflows.Decision{By: cm.Author, Comment: text, Fresh: fresh, Answer: cmd.name == domain.CommandAnswer})
	switch {
	case errors.Is(err, starter.ErrRefused), errors.Is(err, starter.ErrNoLifecycle):
		rec.Result = "refused: " + oneLine(err.Error(), 900)
		s.observeCommand(cmd.name, "refused")
		return "azolla could not " + cmd.name + ": " + escapeMarkdown(oneLine(err.Error(), 900)), nil
	case err != nil:
		return "", err
	}
	switch {
	case res.EventID != "":
		rec.Result = cmd.name + ": emitted " + res.EventID
	case res.Pause != nil:
		rec.Result = cmd.name + ": " + oneLine(res.Pause.Reason, 900)
	default:
		rec.Result = cmd.name + ": done"
	}
	s.observeCommand(cmd.name, "done")
	return "", nil
}

// budget raises the budget by "+N" dollars, in the transaction that
// records the command.
func (s *Service) budget(ctx context.Context, it *domain.IntakeItem, cmd command, rec *domain.ForgeCommand) (string, error) {
	arg, _, _ := strings.Cut(cmd.arg, " ")
	n, err := strconv.ParseFloat(strings.TrimPrefix(strings.TrimPrefix(arg, "+"), "$"), 64)
	if !strings.HasPrefix(arg, "+") || err != nil || n <= 0 || math.IsInf(n, 0) || n > 1e6 {
		rec.Result = "refused: budget wants +N, a number of dollars above 0"
		s.observeCommand(cmd.name, "refused")
		return "`/azolla budget +N` raises the budget by N dollars, e.g. `/azolla budget +5`.", nil
	}
	rec.Result = fmt.Sprintf("budget raised by $%.2f", n)
	st, err := budget.ChangeOnce(ctx, s.Store, it.ObjectiveID, budget.Edit{Add: &n}, func(q store.Querier) (bool, error) {
		return q.RecordForgeCommand(ctx, rec)
	})
	if errors.Is(err, budget.ErrNoBudget) {
		rec.Result = "refused: the objective has no budget to raise"
		s.observeCommand(cmd.name, "refused")
		return "The objective has no budget to raise: it has no cap.", nil
	}
	if err != nil {
		return "", err
	}
	s.observeCommand(cmd.name, "done")
	left := "no cap"
	if l := st.Left(); l != nil {
		left = fmt.Sprintf("$%.2f left", *l)
	}
	rec.Result = ""
	return fmt.Sprintf("Budget raised by $%.2f: %s. Raising it starts no round: `/azolla retry` does.", n, left), nil
}

// answer replies to a command comment once: a reply carries a marker
// naming the comment, looked for before posting.
func (s *Service) answer(ctx context.Context, r *Repository, thread forge.Thread, cm forge.Comment, reply string) error {
	if reply == "" {
		return nil
	}
	mark := r.marker("reply", cm.ID)
	found, err := findMarked(ctx, r, thread, mark)
	if err != nil || found != "" {
		return err
	}
	_, err = r.Forge.PostComment(ctx, thread, reply+"\n\n"+mark)
	return err
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

func (s *Service) observeCommand(command, result string) {
	if s.Observer != nil {
		s.Observer.Command(command, result)
	}
}
