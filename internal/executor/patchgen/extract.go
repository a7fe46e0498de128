package patchgen

import "strings"

// ExtractDiff pulls a unified diff out of a model's or an agent's text: the
// contents of its ```diff or ```patch fenced blocks, joined in order (models
// often give one block per file), else everything from the first line that
// starts a diff ("diff --git ", or "--- " followed by "+++ ") to the end, or
// to the end of the fenced block that line is in. It returns "" if the text
// holds no diff. Line endings become "\n" and the result ends with one.
//
// It does not check the diff: the caller validates the patch, and a
// heuristic here that dropped lines could only turn a patch git would apply
// into one it would not.
func ExtractDiff(text string) string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	lines := strings.SplitAfter(text, "\n")
	diff := fencedDiffs(lines)
	if diff == "" {
		diff = bareDiff(lines)
	}
	if diff != "" && !strings.HasSuffix(diff, "\n") {
		diff += "\n"
	}
	return diff
}

// fence is an open fenced block: its backtick count and language.
type fence struct {
	ticks int
	lang  string
}

// openFence parses a fence opener. Fences only count at column 0: inside a
// diff, a line of the patched file is always prefixed by ' ', '+' or '-', so
// a Markdown file's own fences never end the block early.
func openFence(line string) (fence, bool) {
	n := backticks(line)
	if n < 3 {
		return fence{}, false
	}
	info := strings.TrimSpace(line[n:])
	if strings.Contains(info, "`") {
		return fence{}, false // inline code, not a fence
	}
	lang, _, _ := strings.Cut(info, " ")
	return fence{ticks: n, lang: strings.ToLower(lang)}, true
}

// closes reports whether line closes f: backticks only, at least as many.
func (f fence) closes(line string) bool {
	line = strings.TrimRight(line, " \t\n")
	n := backticks(line)
	return n >= f.ticks && n == len(line)
}

func (f fence) isDiff() bool { return f.lang == "diff" || f.lang == "patch" }

func backticks(s string) int {
	n := 0
	for n < len(s) && s[n] == '`' {
		n++
	}
	return n
}

// fencedDiffs joins the diff and patch blocks that hold a diff. A block left
// open runs to the end of the text: a reply cut off at its token limit may
// still hold whole files.
func fencedDiffs(lines []string) string {
	var out, block strings.Builder
	var open *fence
	flush := func() {
		if startOfDiff(strings.SplitAfter(block.String(), "\n")) >= 0 {
			out.WriteString(block.String())
		}
		block.Reset()
	}
	for _, line := range lines {
		switch {
		case open == nil:
			if f, ok := openFence(line); ok {
				open = &f
			}
		case open.closes(line):
			if open.isDiff() {
				flush()
			}
			open = nil
		case open.isDiff():
			block.WriteString(line)
		}
	}
	if open != nil && open.isDiff() {
		flush()
	}
	return out.String()
}

// bareDiff is the text from the first line that starts a diff to the end,
// or to the end of the fenced block (of any language) that line is in.
func bareDiff(lines []string) string {
	start := startOfDiff(lines)
	if start < 0 {
		return ""
	}
	var open *fence
	for _, line := range lines[:start] {
		if open == nil {
			if f, ok := openFence(line); ok {
				open = &f
			}
		} else if open.closes(line) {
			open = nil
		}
	}
	end := len(lines)
	if open != nil {
		for i := start; i < len(lines); i++ {
			if open.closes(lines[i]) {
				end = i
				break
			}
		}
	}
	return strings.Join(lines[start:end], "")
}

// startOfDiff returns the index of the first line that starts a diff, or -1.
// A "--- " line counts only when "+++ " follows, which keeps a Markdown rule
// or a signature separator from passing for a diff.
func startOfDiff(lines []string) int {
	for i, line := range lines {
		if strings.HasPrefix(line, "diff --git ") {
			return i
		}
		if strings.HasPrefix(line, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ ") {
			return i
		}
	}
	return -1
}
