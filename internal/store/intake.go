package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/azolla/azolla/internal/domain"
)

// Work that enters from outside the CLI (docs/forge.md). An outside item
// is recorded in the transaction that creates what it became, keyed by
// (source, external_id): however many pollers see an issue, however often
// a document is delivered, and wherever a process dies, it becomes one
// objective or one capture. A command comment is recorded once, keyed by
// (source, comment_id), with what came of it.

// IntakeQuerier is the storage side of intake.
type IntakeQuerier interface {
	// InsertIntakeItem writes an item unless one with its key exists, and
	// says whether it wrote it. The item is validated first.
	InsertIntakeItem(ctx context.Context, it *domain.IntakeItem) (bool, error)
	// GetIntakeItem reads an item by its key; a *NotFoundError if none.
	GetIntakeItem(ctx context.Context, source, externalID string) (*domain.IntakeItem, error)
	// IntakeItemOf reads the item an objective came from; a
	// *NotFoundError when it came from none.
	IntakeItemOf(ctx context.Context, objectiveID string) (*domain.IntakeItem, error)
	// ListIntakeItems lists a source's items ("" for every source), oldest
	// first.
	ListIntakeItems(ctx context.Context, p ListIntakeItemsParams) ([]*domain.IntakeItem, error)
	// UpdateIntakeItem writes an item's changing fields: its status
	// comment and digest, whether it is closed, when its text was edited.
	// Its key and what it became never change.
	UpdateIntakeItem(ctx context.Context, it *domain.IntakeItem) error
	// RecordForgeCommand writes a command comment unless one with its key
	// is recorded, and says whether it wrote it. The record is validated
	// first; an untrusted author's command may only be recorded refused.
	RecordForgeCommand(ctx context.Context, c *domain.ForgeCommand) (bool, error)
	// GetForgeCommand reads a command by its key; a *NotFoundError if none.
	GetForgeCommand(ctx context.Context, source, commentID string) (*domain.ForgeCommand, error)
	// ListForgeCommands lists an objective's commands in the order given.
	ListForgeCommands(ctx context.Context, objectiveID string) ([]*domain.ForgeCommand, error)
	// IntakeCursor reads how far a source's poll has read ("" before its
	// first poll); SetIntakeCursor moves it.
	IntakeCursor(ctx context.Context, source string) (string, error)
	SetIntakeCursor(ctx context.Context, source, cursor string, now time.Time) error
	// UpdateObjectiveText replaces a NEW objective's title, description
	// and acceptance criteria (its issue was edited). An objective past
	// NEW is left as it is: false, and no error.
	UpdateObjectiveText(ctx context.Context, p UpdateObjectiveTextParams) (bool, error)
}

// ListIntakeItemsParams filters ListIntakeItems.
type ListIntakeItemsParams struct {
	Source string
	Limit  int
}

// UpdateObjectiveTextParams are UpdateObjectiveText's.
type UpdateObjectiveTextParams struct {
	ObjectiveID        string
	Title              string
	Description        string
	AcceptanceCriteria []string
	Now                time.Time
}

// errIntakeTaken rolls back a Take whose item another taker wrote first.
var errIntakeTaken = errors.New("intake item taken already")

// TakeIntake records item it and creates what it becomes, in one
// transaction: the objective o (kind objective) or the capture c and its
// first CAPTURE_READY event (kind capture). When the item is recorded
// already, whoever took it, nothing is written and the recorded item is
// returned with created=false.
func TakeIntake(ctx context.Context, tx IntakeTaker, it *domain.IntakeItem, o *domain.Objective, c *domain.CaptureBuffer,
	now time.Time) (*domain.IntakeItem, bool, error) {
	err := tx.InTx(ctx, func(q Querier) error {
		written, err := q.InsertIntakeItem(ctx, it)
		if err != nil {
			return err
		}
		if !written {
			return errIntakeTaken
		}
		switch it.Kind {
		case domain.IntakeObjective:
			if o == nil || o.ObjectiveID != it.ObjectiveID {
				return fmt.Errorf("take %s %s: the objective is not the item's", it.Source, it.ExternalID)
			}
			return q.CreateObjective(ctx, o)
		case domain.IntakeCapture:
			if c == nil || c.CaptureBufferID != it.CaptureID {
				return fmt.Errorf("take %s %s: the capture is not the item's", it.Source, it.ExternalID)
			}
			if err := q.CreateCaptureBuffer(ctx, c); err != nil {
				return err
			}
			_, _, err := EmitCaptureReady(ctx, q, c.CaptureBufferID, now)
			return err
		}
		return fmt.Errorf("take %s %s: unknown kind %q", it.Source, it.ExternalID, it.Kind)
	})
	if err == nil {
		return it, true, nil
	}
	// Taken by another (this transaction saw its row), or racing one that
	// committed while this one wrote (a unique key refused it): either way
	// the item is recorded now, and what it became with it.
	if got, gerr := tx.GetIntakeItem(ctx, it.Source, it.ExternalID); gerr == nil {
		return got, false, nil
	}
	if errors.Is(err, errIntakeTaken) {
		return nil, false, fmt.Errorf("take %s %s: recorded, yet not readable", it.Source, it.ExternalID)
	}
	return nil, false, err
}

// IntakeTaker is what TakeIntake needs: transactions, and the item read
// back when another took it first.
type IntakeTaker interface {
	Transactor
	IntakeQuerier
}
