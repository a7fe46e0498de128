package intake

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/lifecycle/pause"
	"github.com/azolla/azolla/internal/textsafe"
)

// The status comment: one per objective from an issue, found again by its
// marker, edited as the objective moves. It tells what `objective show`
// would, in the forge's words: never a secret, never an agent's output.

// marker is the hidden line that marks a comment azolla wrote about id:
// "status" for the status comment, "reply" for the answer to a command
// comment. Its tag is keyed by the repository's MarkerKey (derived from
// azolla's token), so nobody else can write a comment azolla would take
// for its own.
func (r *Repository) marker(kind, id string) string {
	mac := hmac.New(sha256.New, r.MarkerKey)
	mac.Write([]byte(kind + "\x00" + id))
	return fmt.Sprintf("<!-- azolla:%s %s %s -->", kind, id, hex.EncodeToString(mac.Sum(nil)[:8]))
}

// hasMarker says whether a comment carries an azolla marker, anyone's:
// such a comment is never read as a command.
func hasMarker(body string) bool { return strings.Contains(body, "<!-- azolla:") }

// status brings an objective's status comment up to date.
func (s *Service) status(ctx context.Context, r *Repository, it *domain.IntakeItem, st standing, number int, c *Counts) error {
	o := st.o
	text, err := s.statusText(ctx, r, st, it.Closed)
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(text))
	digest := hex.EncodeToString(sum[:])
	if digest == it.StatusDigest && it.StatusCommentID != "" {
		return nil
	}
	id, err := s.postOrEdit(ctx, r, forge.Thread{Number: number}, it.StatusCommentID, r.marker("status", o.ObjectiveID), text)
	if err != nil {
		return err
	}
	it.StatusCommentID, it.StatusDigest = id, digest
	if err := s.Store.UpdateIntakeItem(ctx, it); err != nil {
		return err
	}
	c.Statuses++
	return nil
}

// postOrEdit writes body under mark in thread: it edits comment id when
// given, else the comment that carries mark if one does (posted by a pass
// that died before recording it), else posts one. It returns the
// comment's id.
func (s *Service) postOrEdit(ctx context.Context, r *Repository, thread forge.Thread, id, mark, body string) (string, error) {
	full := body + "\n\n" + mark
	if id == "" {
		found, err := findMarked(ctx, r, thread, mark)
		if err != nil {
			return "", err
		}
		id = found
	}
	if id != "" {
		err := r.Forge.EditComment(ctx, thread, id, full)
		if err == nil {
			return id, nil
		}
		if !errors.Is(err, forge.ErrNotFound) {
			return "", err
		}
		// Deleted by a human: post it again.
	}
	cm, err := r.Forge.PostComment(ctx, thread, full)
	if err != nil {
		return "", err
	}
	return cm.ID, nil
}

// findMarked is the id of azolla's comment in thread that carries mark,
// "" if none does. A marker is only azolla's if the comment's author may
// write to the repository (the trust rule, as for commands): anyone can
// copy the marker of a comment azolla posted, and a stranger's copy is
// never taken for it (edited, or counted as azolla's answer).
func findMarked(ctx context.Context, r *Repository, thread forge.Thread, mark string) (string, error) {
	comments, err := r.Forge.Comments(ctx, thread, zeroTime)
	if err != nil {
		return "", err
	}
	for _, cm := range comments {
		if !strings.Contains(cm.Body, mark) {
			continue
		}
		v, err := r.Trust.Check(ctx, cm.Author)
		if err != nil {
			return "", err
		}
		if v.Trusted {
			return cm.ID, nil
		}
	}
	return "", nil
}

// standing is what the store says of an objective now: the objective, its
// pause states and its pull request (nil for none).
type standing struct {
	o      *domain.Objective
	pauses []*domain.PauseState
	pr     *domain.PullRequest
}

func (s *Service) standing(ctx context.Context, objectiveID string) (standing, error) {
	var st standing
	var err error
	if st.o, err = s.Store.GetObjective(ctx, objectiveID); err != nil {
		return st, err
	}
	if st.pauses, err = s.Store.ListPauseStates(ctx, objectiveID); err != nil {
		return st, err
	}
	st.pr, err = s.Store.GetPullRequest(ctx, objectiveID)
	var nf *domain.NotFoundError
	if errors.As(err, &nf) {
		st.pr, err = nil, nil
	}
	return st, err
}

// statusText is what the status comment says of an objective's standing.
func (s *Service) statusText(ctx context.Context, r *Repository, st standing, closed bool) (string, error) {
	o, pauses, pr := st.o, st.pauses, st.pr
	var b strings.Builder
	fmt.Fprintf(&b, "**azolla** · objective `%s`\n\n", o.ObjectiveID)
	var last *domain.PauseState
	if len(pauses) > 0 {
		last = pauses[len(pauses)-1]
	}
	switch {
	case pause.WasRejected(pauses):
		fmt.Fprintf(&b, "**Rejected.** %s\n", markdownLine(lastOf(pauses, domain.PauseRejected).PrioritizedActions, 0))
	case o.Status == domain.StatusNew:
		fmt.Fprintf(&b, "**Waiting for approval.** Someone who may write to %s approves it with a comment "+
			"`/azolla approve`, or rejects it with `/azolla reject <reason>`.\n", r.Slug)
	case pr != nil && pr.State == domain.PullRequestMerged:
		fmt.Fprintf(&b, "**Merged:** %s.\n", pr.URL)
	case last != nil && handsBack(o, last):
		fmt.Fprintf(&b, "**Paused: %s.**\n", strings.ToLower(strings.ReplaceAll(last.Reason, "_", " ")))
		for i := range last.PrioritizedActions {
			line := markdownLine(last.PrioritizedActions, i)
			if cmd := pause.ForgeCommand(last, i); cmd != "" {
				line += fmt.Sprintf(" (`%s`)", cmd)
			}
			fmt.Fprintf(&b, "- %s\n", line)
		}
	case pr != nil && pr.State == domain.PullRequestOpen && o.Status != domain.StatusInProgress:
		fmt.Fprintf(&b, "**Passed its gate:** pull request %s is open for review. A review asking for changes, "+
			"or `/azolla retry <what to change>` there, starts another round.\n", pr.URL)
	case o.Status == domain.StatusTodo || o.Status == domain.StatusInProgress:
		b.WriteString("**Running.**")
		if r.TimeBudget > 0 {
			fmt.Fprintf(&b, " Time budget per round: %s.", r.TimeBudget)
		}
		b.WriteString("\n")
	case o.Status == domain.StatusDone:
		b.WriteString("**Done.**\n")
	default:
		fmt.Fprintf(&b, "**%s.**\n", o.Status)
	}
	if closed && o.Status != domain.StatusNew && !pause.WasRejected(pauses) && (pr == nil || pr.State == domain.PullRequestOpen) &&
		(last == nil || last.Reason != domain.PauseClosedOnForge) {
		b.WriteString("\nThe issue was closed: from now on no round and no pull request starts by itself, " +
			"and a round running now is stopped.\n")
	}
	spend, err := s.Store.ObjectiveSpend(ctx, o.ObjectiveID)
	if err != nil {
		return "", err
	}
	if spend.Runs > 0 || o.BudgetUSD != nil {
		fmt.Fprintf(&b, "\nSpent $%.2f over %d run(s)", spend.USD, spend.Runs)
		if o.BudgetUSD != nil {
			fmt.Fprintf(&b, " of a $%.2f budget (`/azolla budget +N` raises it)", *o.BudgetUSD)
		}
		b.WriteString(".\n")
	}
	return b.String(), nil
}

// handsBack says whether o's latest pause waits for a human, as the inbox
// lists it: a blocked objective, one whose gate failed, budget is spent
// or agent asked a question (it stays TODO, with the gate's blocker_ref,
// until retried or answered), or
// one whose issue was closed in flight.
func handsBack(o *domain.Objective, last *domain.PauseState) bool {
	switch {
	case o.Status == domain.StatusBlocked:
		return true
	case o.Status == domain.StatusTodo:
		return o.BlockerRef != "" && (last.Reason == domain.PauseGateFailed || last.Reason == domain.PauseBudgetSpent ||
			last.Reason == domain.PauseClosedOnForge || last.Reason == domain.PauseQuestion)
	case o.Status == domain.StatusDone:
		return last.Reason == domain.PauseClosedOnForge
	}
	return false
}

// lastOf is the latest of pauses with reason.
func lastOf(pauses []*domain.PauseState, reason string) *domain.PauseState {
	for i := len(pauses) - 1; i >= 0; i-- {
		if pauses[i].Reason == reason {
			return pauses[i]
		}
	}
	return &domain.PauseState{}
}

// markdownLine is a stored line made safe to show in a comment: on one
// line, with what markdown would act on escaped.
func markdownLine(lines []string, i int) string {
	if i >= len(lines) {
		return ""
	}
	return escapeMarkdown(textsafe.Line(lines[i]))
}

var markdownEscaper = strings.NewReplacer("\\", "\\\\", "`", "\\`", "*", "\\*", "_", "\\_", "[", "\\[", "]", "\\]",
	"<", "&lt;", ">", "&gt;", "@", "@\u200b", "#", "\\#", "|", "\\|")

func escapeMarkdown(s string) string { return markdownEscaper.Replace(s) }
