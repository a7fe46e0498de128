package cli

import (
	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/textsafe"
)

// takenLine says which round took a review and why its author was
// trusted.
func takenLine(f *domain.PullRequestFeedback) string {
	s := "taken:     " + textsafe.Line(f.Author) + " (" + textsafe.Line(f.TrustReason) + ") into the round of " +
		textsafe.Line(f.TakenBy)
	if sum := textsafe.Line(f.Summary); sum != "" {
		s += `: "` + sum + `"`
	}
	return s
}
