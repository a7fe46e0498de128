package intake

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/forge"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/starter"
	"github.com/azolla/azolla/workflows"
)

// Bounds of what an issue gives an objective (the objective schema's).
const (
	maxTitle       = 500
	maxDescription = 64 << 10
	maxCriterion   = 1000
	maxCriteria    = 50
)

// issue handles one issue read from the forge: a new one that matches the
// triggers is taken; a known one's edits, closing and reopening are
// followed.
func (s *Service) issue(ctx context.Context, r *Repository, is forge.Issue, c *Counts) error {
	it, err := s.Store.GetIntakeItem(ctx, r.Source, strconv.Itoa(is.Number))
	var nf *domain.NotFoundError
	switch {
	case errors.As(err, &nf):
		if is.State != forge.IssueOpen || !r.triggered(is) {
			return nil
		}
		return s.take(ctx, r, is, c)
	case err != nil:
		return err
	}
	closed := is.State == forge.IssueClosed
	if closed != it.Closed {
		// A NEW objective is rejected before the close is recorded, so a
		// pass that dies in between rejects it on the next.
		if closed {
			if err := s.closed(ctx, r, it, is, c); err != nil {
				return err
			}
		}
		it.Closed = closed
		if err := s.Store.UpdateIntakeItem(ctx, it); err != nil || closed {
			return err
		}
	}
	if it.Kind != domain.IntakeObjective || closed {
		return nil
	}
	o, err := s.Store.GetObjective(ctx, it.ObjectiveID)
	if err != nil {
		return err
	}
	if o.Status != domain.StatusNew {
		// Past NEW, what was approved is the objective's text: later edits
		// of the issue are the issue's alone.
		return nil
	}
	if err := s.edited(ctx, r, it, o, is, c); err != nil {
		return err
	}
	if r.ApproveOnLabel {
		var textAt time.Time
		if it.EditedAt != nil {
			textAt = *it.EditedAt
		}
		return s.labelApproval(ctx, r, it, is, textAt)
	}
	return nil
}

// edited rewrites a NEW objective's text when its issue's changed.
func (s *Service) edited(ctx context.Context, r *Repository, it *domain.IntakeItem, o *domain.Objective, is forge.Issue, c *Counts) error {
	title, description, criteria := issueText(is)
	if o.Title == title && o.Description == description && slices.Equal(o.AcceptanceCriteria, criteria) {
		return nil
	}
	ok, err := s.Store.UpdateObjectiveText(ctx, store.UpdateObjectiveTextParams{ObjectiveID: o.ObjectiveID, Title: title,
		Description: description, AcceptanceCriteria: criteria, Now: s.now()})
	if err != nil || !ok {
		return err
	}
	c.Updated++
	s.observe(r, "updated")
	// The forge's time of the edit, at the latest: an approval written
	// before it did not see this text (commands.go).
	edited := is.UpdatedAt.UTC()
	it.EditedAt = &edited
	return s.Store.UpdateIntakeItem(ctx, it)
}

// labelApproval approves the NEW objective of an issue whose trigger label
// someone trusted applied at or after textAt, when its text last changed
// (forge.intake.approve_on_label): applying it approves the text they
// could read. Who applied it is the forge's history of the issue.
func (s *Service) labelApproval(ctx context.Context, r *Repository, it *domain.IntakeItem, is forge.Issue, textAt time.Time) error {
	v, at, err := s.trustedLabel(ctx, r, is, textAt)
	if err != nil || !v.Trusted {
		return err
	}
	_, err = s.Decider.DecideOnce(ctx, it.ObjectiveID, workflows.Approve,
		requestID(r.Source, "labelled", fmt.Sprintf("%d-%d", is.Number, at.Unix())),
		workflows.Decision{By: v.User, Comment: fmt.Sprintf("labelled issue #%d %s (%s; forge.intake.approve_on_label)",
			is.Number, r.Label, v.Reason)})
	if errors.Is(err, starter.ErrRefused) {
		return nil // approved or rejected meanwhile
	}
	return err
}

// take turns a new issue into an objective (or a capture), once.
func (s *Service) take(ctx context.Context, r *Repository, is forge.Issue, c *Counts) error {
	number := strconv.Itoa(is.Number)
	it := &domain.IntakeItem{Source: r.Source, ExternalID: number, URL: oneLine(is.URL, 2048),
		Author: oneLine(is.Author, 255), Repository: r.Key, CreatedAt: s.now(), UpdatedAt: s.now()}
	var o *domain.Objective
	var capture *domain.CaptureBuffer
	if r.AsCapture {
		// A capture goes to the triage agent with no approval between:
		// only a trusted author's issue, or one a trusted person labelled
		// after its last change, becomes one.
		if ok, err := s.vouched(ctx, r, is); err != nil || !ok {
			if err == nil {
				s.observe(r, "untrusted")
			}
			return err
		}
		it.Kind, it.CaptureID = domain.IntakeCapture, captureID(r.Source, is.Number)
		capture = captureOf(it, is)
	} else {
		o = s.objectiveOf(r, is)
		it.Kind, it.ObjectiveID = domain.IntakeObjective, o.ObjectiveID
	}
	got, created, err := store.TakeIntake(ctx, s.Store, it, o, capture, s.now())
	if err != nil {
		return err
	}
	if !created {
		s.observe(r, "exists")
		return nil
	}
	c.Created++
	s.observe(r, "created")
	s.log().Info("forge intake: issue taken", "repository", r.Slug, "issue", is.Number, "kind", got.Kind,
		"objective", got.ObjectiveID, "capture", got.CaptureID)
	if o == nil {
		return nil
	}
	// As `objective create` does: a lifecycle that cannot start now is
	// started by the poller, which finds the objective not handed over.
	if err := s.Decider.Start(ctx, o); err != nil {
		s.log().Warn("forge intake: start the lifecycle; the poller will", "objective", o.ObjectiveID, "error", err)
	}
	if r.AutoApproveWriters {
		if err := s.autoApprove(ctx, r, got, is); err != nil {
			return err
		}
	}
	if r.ApproveOnLabel {
		// Taken now, its text is the issue's at its last update, which the
		// label must not precede (a later comment makes it wait for a
		// command: the safe side).
		return s.labelApproval(ctx, r, got, is, is.UpdatedAt)
	}
	return nil
}

// autoApprove approves the objective of an issue whose author the trust
// rule trusts (forge.intake.auto_approve_writers).
func (s *Service) autoApprove(ctx context.Context, r *Repository, it *domain.IntakeItem, is forge.Issue) error {
	v, err := r.Trust.Check(ctx, is.Author)
	if err != nil || !v.Trusted {
		return err
	}
	_, err = s.Decider.DecideOnce(ctx, it.ObjectiveID, workflows.Approve, requestID(r.Source, "opened", is.Number),
		workflows.Decision{By: is.Author, Comment: fmt.Sprintf("opened issue #%d (%s; forge.intake.auto_approve_writers)",
			is.Number, v.Reason)})
	return err
}

// closed follows an issue closed on the forge: a NEW objective is
// rejected. One past NEW is the lifecycle's to stop, once the close is
// recorded: a round that has not started its agent does not, the gate of
// one running hands the objective back (CLOSED_ON_FORGE) and opens no
// pull request, and an open pull request's reviews start no round by
// themselves.
func (s *Service) closed(ctx context.Context, r *Repository, it *domain.IntakeItem, is forge.Issue, c *Counts) error {
	c.Closed++
	s.observe(r, "closed")
	if it.Kind != domain.IntakeObjective {
		return nil
	}
	o, err := s.Store.GetObjective(ctx, it.ObjectiveID)
	if err != nil || o.Status != domain.StatusNew {
		return err
	}
	_, err = s.Decider.DecideOnce(ctx, o.ObjectiveID, workflows.Reject, requestID(r.Source, "closed", is.Number),
		workflows.Decision{By: "forge", Comment: fmt.Sprintf("issue #%d was closed on %s", is.Number, r.Slug)})
	return err
}

// trustedLabel is the trust rule's verdict on whoever applied the trigger
// label to is, and when, as the forge's history says; not trusted when no
// one did, or when the label came before textAt (the text changed after
// it).
func (s *Service) trustedLabel(ctx context.Context, r *Repository, is forge.Issue, textAt time.Time) (forge.Verdict, time.Time, error) {
	if r.Label == "" || !slices.ContainsFunc(is.Labels, func(l string) bool { return strings.EqualFold(l, r.Label) }) {
		return forge.Verdict{}, time.Time{}, nil
	}
	user, at, err := r.Forge.LabelledBy(ctx, is.Number, r.Label)
	if err != nil || user == "" || textAt.After(at) {
		return forge.Verdict{}, at, err
	}
	v, err := r.Trust.Check(ctx, user)
	return v, at, err
}

// vouched says whether someone trusted stands behind an issue's words as
// they are: its author, or whoever applied the trigger label after its
// last update.
func (s *Service) vouched(ctx context.Context, r *Repository, is forge.Issue) (bool, error) {
	v, err := r.Trust.Check(ctx, is.Author)
	if err != nil || v.Trusted {
		return v.Trusted, err
	}
	v, _, err = s.trustedLabel(ctx, r, is, is.UpdatedAt)
	return v.Trusted, err
}

// triggered says whether an issue matches any trigger set.
func (r *Repository) triggered(is forge.Issue) bool {
	switch {
	case r.Label != "" && slices.ContainsFunc(is.Labels, func(l string) bool { return strings.EqualFold(l, r.Label) }):
		return true
	case r.Assignee != "" && slices.ContainsFunc(is.Assignees, func(a string) bool { return strings.EqualFold(a, r.Assignee) }):
		return true
	case r.Mention != "" && mentions(is.Title+"\n"+is.Body, r.Mention):
		return true
	}
	return false
}

// mentions says whether text holds word on its own ("@azolla", not
// "@azolla-bot" nor "x@azolla").
func mentions(text, word string) bool {
	for i := 0; ; {
		j := strings.Index(strings.ToLower(text[i:]), strings.ToLower(word))
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(word)
		before, _ := utf8.DecodeLastRuneInString(text[:start])
		after, _ := utf8.DecodeRuneInString(text[end:])
		if (start == 0 || !wordRune(before)) && (end == len(text) || !wordRune(after)) {
			return true
		}
		i = end
	}
}

func wordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '@'
}

// objectiveOf is the NEW objective an issue becomes.
func (s *Service) objectiveOf(r *Repository, is forge.Issue) *domain.Objective {
	title, description, criteria := issueText(is)
	now := s.now()
	o := &domain.Objective{ObjectiveID: objectiveID(r.Slug, is.Number), ObjectiveType: "TICKET", Title: title,
		Description: description, AcceptanceCriteria: criteria, Status: domain.StatusNew, Blockers: []string{},
		Urgency: "NORMAL", Repository: r.Key, Provenance: oneLine(is.URL, 2048), CreatedAt: now, UpdatedAt: now}
	if r.BudgetUSD > 0 {
		b := r.BudgetUSD
		o.BudgetUSD = &b
	}
	if r.Attempts > 1 {
		n := r.Attempts
		o.Attempts = &n
	}
	return o
}

// taskItem is a task-list line: "- [ ] text", "* [x] text".
var taskItem = regexp.MustCompile(`^\s*[-*+]\s+\[[ xX]\]\s+(.+)$`)

// issueText is what an issue's text gives an objective: its title on one
// line, its body, and its task-list items as acceptance criteria.
func issueText(is forge.Issue) (title, description string, criteria []string) {
	title = oneLine(is.Title, maxTitle)
	if title == "" {
		title = fmt.Sprintf("Issue #%d", is.Number)
	}
	description = strings.ToValidUTF8(strings.TrimSpace(is.Body), "\uFFFD")
	if len(description) > maxDescription {
		description = strings.ToValidUTF8(description[:maxDescription], "")
	}
	criteria = []string{}
	for _, line := range strings.Split(is.Body, "\n") {
		if m := taskItem.FindStringSubmatch(strings.TrimRight(line, "\r")); m != nil && len(criteria) < maxCriteria {
			if c := oneLine(m[1], maxCriterion); c != "" {
				criteria = append(criteria, c)
			}
		}
	}
	return title, description, criteria
}

// oneLine makes text a record's single line: control and format
// characters (a terminal escape, a bidirectional override) become spaces,
// runs of spaces one, at most max bytes.
func oneLine(text string, max int) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToValidUTF8(text, "\uFFFD") {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		if b.Len()+utf8.RuneLen(r) > max {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// objectiveID is a readable id for issue number of repository slug:
// "widgets-12-3f9a1c". Two takers of one issue derive different ids; the
// store keeps the first one's.
func objectiveID(slug string, number int) string {
	return newID(cmp.Or(idWords(slug[strings.LastIndex(slug, "/")+1:], 40), "issue") + "-" + strconv.Itoa(number))
}

// idWords is text as an id's words: lower case, runs of anything else
// one dash, at most max bytes.
func idWords(text string, max int) string {
	w := strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(text), "-"), "-")
	if len(w) > max {
		w = strings.TrimRight(w[:max], "-")
	}
	return w
}

// newID is prefix and six random hex digits.
func newID(prefix string) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// captureID is the capture an issue becomes: one per source and number.
func captureID(source string, number int) string {
	sum := sha256.Sum256([]byte(source))
	return fmt.Sprintf("cap-issue-%s-%d", hex.EncodeToString(sum[:6]), number)
}

// captureOf is the capture an issue becomes, for the triage track.
func captureOf(it *domain.IntakeItem, is forge.Issue) *domain.CaptureBuffer {
	title, description, _ := issueText(is)
	content := title
	if description != "" {
		content += "\n\n" + description
	}
	source := "issue " + it.ExternalID
	if it.URL != "" {
		source = it.URL
	}
	return &domain.CaptureBuffer{CaptureBufferID: it.CaptureID, Source: source, Content: content,
		Status: domain.CapturePending, CreatedAt: it.CreatedAt, UpdatedAt: it.CreatedAt}
}

// requestID names a decision intake sends, so the lifecycle takes it once
// however often it is sent: what it is for, the source and the item or
// comment.
func requestID(source, what string, id any) string {
	sum := sha256.Sum256([]byte(source))
	return fmt.Sprintf("azolla-forge-%s-%s-%v", what, hex.EncodeToString(sum[:8]), id)
}
