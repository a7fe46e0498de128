package gitops

import (
	"strconv"
	"strings"
)

// hunks parses the text hunks at p.i, as many as follow one another, and
// returns how many there were. Like git without --recount, a hunk is exactly
// as long as its header's counts say.
func (p *patchParser) hunks() (int, error) {
	n := 0
	for p.i < len(p.lines) && strings.HasPrefix(p.lines[p.i], "@@ -") {
		oldLines, newLines, ok := parseHunkHeader(p.lines[p.i])
		if !ok {
			return 0, refuse("", "line %d: malformed hunk header", p.i+1)
		}
		start := p.i
		p.i++
		changed := false
		for oldLines > 0 || newLines > 0 {
			if p.i >= len(p.lines) {
				return 0, refuse("", "line %d: hunk is cut short by the end of the patch", start+1)
			}
			line := p.lines[p.i]
			if !strings.HasSuffix(line, "\n") {
				return 0, refuse("", "line %d: the patch does not end with a newline", p.i+1)
			}
			switch line[0] {
			case ' ', '\n':
				oldLines--
				newLines--
			case '-':
				oldLines--
				changed = true
			case '+':
				newLines--
				changed = true
			case '\\':
				if !isNoNewline(line) {
					return 0, refuse("", "line %d: malformed hunk line", p.i+1)
				}
			default:
				return 0, refuse("", "line %d: malformed hunk line (do the hunk's line counts match?)", p.i+1)
			}
			if oldLines < 0 || newLines < 0 {
				return 0, refuse("", "line %d: hunk has more lines than its header says", start+1)
			}
			p.i++
		}
		if !changed {
			return 0, refuse("", "line %d: hunk changes nothing", start+1)
		}
		if p.i < len(p.lines) && isNoNewline(p.lines[p.i]) {
			p.i++
		}
		n++
	}
	return n, nil
}

// isNoNewline matches "\ No newline at end of file" in any language: git
// only asks for "\ " and a dozen bytes.
func isNoNewline(line string) bool {
	return len(line) >= 12 && strings.HasPrefix(line, `\ `)
}

// parseHunkHeader reads "@@ -a[,b] +c[,d] @@..." and returns b and d (1
// when left out), as git's parse_fragment_header does.
func parseHunkHeader(line string) (oldLines, newLines int, ok bool) {
	if !strings.HasSuffix(line, "\n") {
		return 0, 0, false
	}
	s := strings.TrimPrefix(line, "@@ -")
	if oldLines, s, ok = parseRange(s, " +"); !ok {
		return 0, 0, false
	}
	if newLines, _, ok = parseRange(s, " @@"); !ok {
		return 0, 0, false
	}
	return oldLines, newLines, true
}

// parseRange reads "start[,count]" then expect, and returns count.
func parseRange(s, expect string) (count int, rest string, ok bool) {
	if _, s, ok = leadingNumber(s); !ok {
		return 0, "", false
	}
	count = 1
	if after, found := strings.CutPrefix(s, ","); found {
		if count, s, ok = leadingNumber(after); !ok {
			return 0, "", false
		}
	}
	rest, ok = strings.CutPrefix(s, expect)
	return count, rest, ok
}

func leadingNumber(s string) (int, string, bool) {
	end := 0
	for end < len(s) && isDigit(s[end]) {
		end++
	}
	n, err := strconv.Atoi(s[:end])
	if end == 0 || err != nil {
		return 0, "", false
	}
	return n, s[end:], true
}

// binary reads what follows a git header with no hunks: "GIT binary patch"
// with its data, or "Binary files ... differ". It reports whether there was
// binary content; name is the path for a refusal.
func (p *patchParser) binary(name string) (bool, error) {
	if p.i >= len(p.lines) {
		return false, nil
	}
	line := p.lines[p.i]
	isData := line == "GIT binary patch\n"
	isNote := strings.HasSuffix(line, " differ\n") &&
		(strings.HasPrefix(line, "Binary files ") || strings.HasPrefix(line, "Files "))
	if !isData && !isNote {
		return false, nil
	}
	if !p.allowBinary {
		return false, refuse(name, "binary content is not allowed")
	}
	p.i++
	if isNote {
		return true, nil
	}
	// A forward hunk, then optionally the reverse one.
	found, err := p.binaryHunk()
	if err != nil {
		return false, err
	}
	if !found {
		return false, refuse(name, "line %d: 'GIT binary patch' without literal or delta data", p.i+1)
	}
	if _, err := p.binaryHunk(); err != nil {
		return false, err
	}
	return true, nil
}

// base85 is git's base-85 alphabet.
const base85 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"

// binaryHunk reads "literal N" or "delta N" and its data lines up to the
// blank line that ends them, checking each as git's parse_binary_hunk does.
func (p *patchParser) binaryHunk() (bool, error) {
	if p.i >= len(p.lines) {
		return false, nil
	}
	head := strings.TrimSuffix(p.lines[p.i], "\n")
	size, isLiteral := strings.CutPrefix(head, "literal ")
	size, isDelta := strings.CutPrefix(size, "delta ")
	if !isLiteral && !isDelta {
		return false, nil
	}
	if _, err := strconv.ParseUint(size, 10, 63); err != nil {
		return false, refuse("", "line %d: malformed binary hunk size", p.i+1)
	}
	p.i++
	for ; ; p.i++ {
		if p.i >= len(p.lines) {
			return false, refuse("", "line %d: binary data is cut short by the end of the patch", p.i)
		}
		line := p.lines[p.i]
		if line == "\n" {
			p.i++
			return true, nil
		}
		if !validBase85Line(line) {
			return false, refuse("", "line %d: corrupt binary data", p.i+1)
		}
	}
}

// validBase85Line checks a length byte, then whole groups of five base-85
// characters holding that many bytes, then a newline.
func validBase85Line(line string) bool {
	n := len(line)
	if n < 7 || (n-2)%5 != 0 || line[n-1] != '\n' {
		return false
	}
	var length int
	switch c := line[0]; {
	case 'A' <= c && c <= 'Z':
		length = int(c-'A') + 1
	case 'a' <= c && c <= 'z':
		length = int(c-'a') + 27
	default:
		return false
	}
	capacity := (n - 2) / 5 * 4
	if capacity < length || length <= capacity-4 {
		return false
	}
	for i := 1; i < n-1; i++ {
		if strings.IndexByte(base85, line[i]) < 0 {
			return false
		}
	}
	return true
}
