package patchgen_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/azolla/azolla/internal/executor/runreport"
)

// An agent asks a human by writing $AZOLLA_QUESTION_FILE, outside the
// worktree, or its report's question: the output carries the question,
// shown safe and bounded; a run that asks nothing has none.
func TestCommand_QuestionFromTheQuestionFileOrTheReport(t *testing.T) {
	t.Parallel()
	out, _ := generate(t, `sed -i 's/world/there/' hello.txt && `+
		`printf 'Keep the v1 API or the v2 one?\n\e]0;title\a\n' > "$AZOLLA_QUESTION_FILE"`)
	require.Equal(t, `Keep the v1 API or the v2 one?`+"\n"+`\x1b]0;title\x07`, out.Question,
		"trimmed, its controls shown rather than obeyed")
	require.NotContains(t, out.Patch, "question.txt", "the question file is not part of the patch")

	rep, _ := generate(t, `printf '{"question":"Which database?"}' > "$AZOLLA_REPORT_FILE"`)
	require.Equal(t, "Which database?", rep.Question, rep.Notes)
	require.NotNil(t, rep.Report, "a report holding only a question is a report")

	long, _ := generate(t, `head -c 9000 /dev/zero | tr '\0' 'q' > "$AZOLLA_QUESTION_FILE"`)
	require.Equal(t, runreport.MaxQuestion, len([]rune(long.Question)))
	require.True(t, strings.HasSuffix(long.Question, "…"), "the cut is marked")

	blank, _ := generate(t, `sed -i 's/world/there/' hello.txt && printf '  \n' > "$AZOLLA_QUESTION_FILE"`)
	require.Empty(t, blank.Question, "blanks ask nothing")
	require.NotEmpty(t, blank.Patch)
}
