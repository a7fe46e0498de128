package inbox

import (
	"strings"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/textsafe"
)

// NotTaken returns the feedback not taken on pull request number.
func NotTaken(fb []*domain.PullRequestFeedback, number int) []*domain.PullRequestFeedback {
	var out []*domain.PullRequestFeedback
	for _, f := range fb {
		if f.Number == number && f.NotTaken() {
			out = append(out, f)
		}
	}
	return out
}

// NotTakenLine says, on one printable line, why a review was not taken:
// "not taken: stranger may not write to acme/widgets (read access):
// <its first line>". The row may have been written straight into the
// database, so every field is escaped.
func NotTakenLine(f *domain.PullRequestFeedback) string {
	who, why := textsafe.Line(f.Author), textsafe.Line(f.TrustReason)
	s := "not taken: " + who
	if strings.HasPrefix(why, "may not ") {
		s += " " + why
	} else {
		s += " (" + why + ")"
	}
	if sum := textsafe.Line(f.Summary); sum != "" {
		s += `: "` + sum + `"`
	}
	return s
}
