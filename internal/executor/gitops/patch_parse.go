package gitops

import (
	"errors"
	"strconv"
	"strings"
)

// fileChange is one file's section of a patch.
type fileChange struct {
	// names are every path the section names, -p1 stripped, in order.
	names []string
	// symlink / gitlink: some mode in the section has that type.
	symlink, gitlink bool
}

// patchParser walks a patch the way git apply does: headers are found only
// where git looks for them, hunks span exactly the lines their counts say,
// and what git would skip as garbage is skipped, except what looks like a
// hunk line after the first file (a hunk longer than its header claims,
// which git would silently cut short).
type patchParser struct {
	lines       []string // each with its "\n", except perhaps the last
	i           int
	allowBinary bool
	files       []fileChange
}

// parsePatch returns the file sections of patch, or a *RefusedError.
func parsePatch(patch string, allowBinary bool) ([]fileChange, error) {
	p := &patchParser{lines: strings.SplitAfter(patch, "\n"), allowBinary: allowBinary}
	if p.lines[len(p.lines)-1] == "" {
		p.lines = p.lines[:len(p.lines)-1]
	}
	for p.i < len(p.lines) {
		line := p.lines[p.i]
		var err error
		switch {
		case strings.HasPrefix(line, "diff --git "):
			err = p.gitSection()
		case strings.HasPrefix(line, "--- "):
			err = p.traditionalSection()
		case strings.HasPrefix(line, "+++ "):
			err = refuse("", "line %d: '+++' without a '---' line before it", p.i+1)
		case strings.HasPrefix(line, "@@ -"):
			err = refuse("", "line %d: hunk without a file header", p.i+1)
		case len(p.files) > 0 && isStrayHunkLine(line):
			err = refuse("", "line %d: hunk line outside any hunk (are the hunk's line counts right?)", p.i+1)
		default:
			p.i++
		}
		if err != nil {
			if ne, ok := errors.AsType[*nameError](err); ok {
				return nil, refuse(ne.path, "line %d: %s", p.i+1, ne.reason)
			}
			return nil, err
		}
	}
	return p.files, nil
}

// isStrayHunkLine: a line git would skip but that reads like hunk content;
// "-- " opens format-patch's signature.
func isStrayHunkLine(line string) bool {
	line = strings.TrimSuffix(line, "\n")
	if line == "-- " || line == "--" {
		return false
	}
	return line != "" && (line[0] == '+' || line[0] == '-' || line[0] == ' ')
}

// headerLine returns line without its newline, refusing control characters
// other than tab, which git reads differently from a plain reading.
func (p *patchParser) headerLine(line string) (string, error) {
	s := strings.TrimSuffix(line, "\n")
	if strings.ContainsFunc(s, func(r rune) bool { return r != '\t' && (r < 0x20 || r == 0x7f) }) {
		return "", refuse("", "line %d: control character in a patch header", p.i+1)
	}
	return s, nil
}

// gitSection parses "diff --git" and its extended header, as git's
// parse_git_diff_header does: header lines are taken in git's order of
// precedence until the first line that is none of them.
func (p *patchParser) gitSection() error {
	start := p.i
	first, err := p.headerLine(p.lines[p.i])
	if err != nil {
		return err
	}
	var fc fileChange
	def, hasDef := gitHeaderName(strings.TrimPrefix(first, "diff --git "))
	var isNew, isDelete, meta, sawOld, sawNew, sawRenameCopy bool
	p.i++
header:
	for ; p.i < len(p.lines) && strings.HasSuffix(p.lines[p.i], "\n"); p.i++ {
		raw := p.lines[p.i]
		if strings.HasPrefix(raw, "@@ -") {
			break header
		}
		key, ok := gitHeaderKey(raw)
		if !ok {
			break header
		}
		line, err := p.headerLine(raw)
		if err != nil {
			return err
		}
		value := line[len(key):]
		switch key {
		case "--- ", "+++ ":
			isOld := key == "--- "
			if isOld && sawOld || !isOld && sawNew {
				return refuse("", "line %d: repeated %q line", p.i+1, strings.TrimSpace(key))
			}
			sawOld, sawNew = sawOld || isOld, sawNew || !isOld
			if isDevNull(value) {
				if isOld && !isNew || !isOld && !isDelete {
					return refuse("", "line %d: /dev/null without a new or deleted file mode before it", p.i+1)
				}
				continue
			}
			name, err := prefixedName(value, true)
			if err != nil {
				return err
			}
			fc.names = append(fc.names, name)
		case "old mode ", "new mode ", "deleted file mode ", "new file mode ":
			meta = true
			isNew = isNew || key == "new file mode "
			isDelete = isDelete || key == "deleted file mode "
			if err := p.checkMode(&fc, value); err != nil {
				return err
			}
		case "copy from ", "copy to ", "rename old ", "rename new ", "rename from ", "rename to ":
			meta, sawRenameCopy = true, true
			name, err := verbatimName(value)
			if err != nil {
				return err
			}
			fc.names = append(fc.names, name)
		case "index ":
			// "index <old>..<new> <mode>": the mode, when present, counts.
			if _, mode, ok := strings.Cut(value, " "); ok {
				if err := p.checkMode(&fc, mode); err != nil {
					return err
				}
			}
		}
	}
	if p.i == start+1 {
		return refuse("", "line %d: 'diff --git' line without an extended header or hunks", start+1)
	}
	if sawOld != sawNew {
		return refuse("", "line %d: a '---' line needs a '+++' line and the other way round", start+1)
	}
	if hasDef {
		fc.names = append([]string{def}, fc.names...)
	} else if !sawOld && !sawRenameCopy {
		return refuse("", "line %d: cannot tell which file 'diff --git' names", start+1)
	}
	if len(fc.names) == 0 {
		return refuse("", "line %d: both sides are /dev/null", start+1)
	}
	hunks, err := p.hunks()
	if err != nil {
		return err
	}
	if hunks == 0 {
		isBinary, err := p.binary(fc.names[0])
		if err != nil {
			return err
		}
		if !isBinary && !meta {
			return refuse(fc.names[0], "no hunks, binary data or mode change")
		}
	}
	p.files = append(p.files, fc)
	return nil
}

// gitHeaderKeys are git's extended header lines in its order of precedence.
var gitHeaderKeys = []string{
	"--- ", "+++ ", "old mode ", "new mode ", "deleted file mode ", "new file mode ",
	"copy from ", "copy to ", "rename old ", "rename new ", "rename from ", "rename to ",
	"similarity index ", "dissimilarity index ", "index ",
}

func gitHeaderKey(line string) (string, bool) {
	for _, k := range gitHeaderKeys {
		if strings.HasPrefix(line, k) {
			return k, true
		}
	}
	return "", false
}

// checkMode reads an octal mode as git does (digits up to whitespace) and
// records or refuses anything but a regular file.
func (p *patchParser) checkMode(fc *fileChange, value string) error {
	digits, _, _ := strings.Cut(strings.TrimLeft(value, " "), " ")
	digits, _, _ = strings.Cut(digits, "\t")
	mode, err := strconv.ParseUint(digits, 8, 32)
	if err != nil {
		return refuse("", "line %d: malformed file mode %q", p.i+1, value)
	}
	switch mode & 0o170000 {
	case 0o100000:
		return nil
	case 0o120000:
		fc.symlink = true
		return nil
	case 0o160000:
		fc.gitlink = true
		return nil
	}
	return refuse("", "line %d: unsupported file mode %06o", p.i+1, mode)
}

// traditionalSection parses a "---"/"+++" pair outside a git header. Unlike
// git, which skips such a pair unless a hunk follows, it refuses the pair
// then.
func (p *patchParser) traditionalSection() error {
	if p.i+1 >= len(p.lines) || !strings.HasPrefix(p.lines[p.i+1], "+++ ") {
		return refuse("", "line %d: '---' without a '+++' line after it", p.i+1)
	}
	if p.i+2 >= len(p.lines) || !strings.HasPrefix(p.lines[p.i+2], "@@ -") {
		return refuse("", "line %d: '---'/'+++' pair without a hunk after it", p.i+1)
	}
	var fc fileChange
	for range 2 {
		line, err := p.headerLine(p.lines[p.i])
		if err != nil {
			return err
		}
		if value := line[4:]; !isDevNull(value) {
			name, err := prefixedName(value, false)
			if err != nil {
				return err
			}
			fc.names = append(fc.names, name)
		}
		p.i++
	}
	if len(fc.names) == 0 {
		return refuse("", "line %d: both sides are /dev/null", p.i-1)
	}
	if _, err := p.hunks(); err != nil {
		return err
	}
	p.files = append(p.files, fc)
	return nil
}
