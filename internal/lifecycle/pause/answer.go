package pause

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/azolla/azolla/internal/domain"
)

// BundleGetter reads a workorder's output bundle.
type BundleGetter interface {
	GetOutputBundle(ctx context.Context, workOrderID string) (*domain.OutputBundle, error)
}

// ErrNoQuestion says an answer was given to an objective whose agent asked
// nothing, or with no words.
var ErrNoQuestion = errors.New("no question waits for an answer")

// CheckAnswer says whether answer may answer o's question
// (docs/patches.md#questions): o waits after a FAIL of a workorder whose
// agent asked one (its bundle is QUESTION), and the answer has words. A
// refusal wraps ErrNoQuestion and says what to do instead.
func CheckAnswer(ctx context.Context, q BundleGetter, o *domain.Objective, answer string) error {
	if strings.TrimSpace(answer) == "" {
		return fmt.Errorf("objective %s: an answer needs words: %w", o.ObjectiveID, ErrNoQuestion)
	}
	if o.Status == domain.StatusTodo && o.BlockerRef.Kind() == domain.BlockerGate {
		b, err := q.GetOutputBundle(ctx, o.BlockerRef.ID())
		if err != nil && !errors.Is(err, domain.ErrNotFound) {
			return err
		}
		if b != nil && b.RunnerStatus == domain.RunnerQuestion {
			return nil
		}
	}
	return fmt.Errorf("objective %s is %s and its agent asked nothing (objective retry --comment gives a round "+
		"words of yours): %w", o.ObjectiveID, o.Status, ErrNoQuestion)
}
