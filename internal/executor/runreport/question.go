package runreport

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/azolla/azolla/internal/textsafe"
)

// QuestionFileName is the name of the file in a run's private directory,
// outside the worktree, where an agent may write a question for a human,
// given to it as $AZOLLA_QUESTION_FILE (docs/patches.md#questions).
const QuestionFileName = "question.txt"

// MaxQuestion is the most characters (runes) a question keeps; a longer
// one is cut, the cut marked.
const MaxQuestion = 4000

// maxQuestionFileBytes bounds what is read of a question file.
const maxQuestionFileBytes = 64 << 10

// ReadQuestion reads the question an agent may have written at path: ""
// and no problem when it wrote none (no file, or only blanks). A file
// that cannot be read is no question and a problem, one line for the
// run's notes.
func ReadQuestion(path string) (question, problem string) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", ""
	}
	if err != nil {
		return "", fmt.Sprintf("question file not read: %v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxQuestionFileBytes))
	if err != nil {
		return "", fmt.Sprintf("question file not read: %v", err)
	}
	return Question(string(data)), ""
}

// Question is q as a record keeps it: valid UTF-8 with its control
// characters shown rather than obeyed, trimmed, at most MaxQuestion
// characters; "" when q holds only blanks.
func Question(q string) string {
	q = strings.TrimSpace(textsafe.Block(q))
	return truncateRunes(q, MaxQuestion)
}
