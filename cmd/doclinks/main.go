// Command doclinks checks the relative links of Markdown files: every link
// to a file must name one that exists, and every #fragment a heading of
// the file it points into (as GitHub makes heading anchors). Given Go
// files, it checks the docs/… pages their comments cite, from the
// repository's root. It prints each broken link and exits 1 if there is
// any; `make lint` runs it on the repository's Markdown and Go.
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

func main() {
	broken, err := check(os.Args[1:], os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "doclinks:", err)
		os.Exit(2)
	}
	if broken > 0 {
		os.Exit(1)
	}
}

// check checks the links of files and prints the broken ones to out.
func check(files []string, out io.Writer) (broken int, err error) {
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := anchors[path]; ok {
			return a, nil
		}
		text, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		a := headingAnchors(string(text))
		anchors[path] = a
		return a, nil
	}
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			return broken, err
		}
		found, from := links(string(text)), f
		if strings.HasSuffix(f, ".go") {
			// Citations in code are paths from the repository's root.
			found, from = citations(string(text)), "."+string(filepath.Separator)+"cited"
		}
		for _, l := range found {
			if why := l.problem(from, anchorsOf); why != "" {
				fmt.Fprintf(out, "%s:%d: %s: %s\n", f, l.line, l.target, why)
				broken++
			}
		}
	}
	return broken, nil
}

// link is one Markdown link and the line it is on.
type link struct {
	target string
	line   int
}

var linkPattern = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// links returns the links of a Markdown text outside code: fenced blocks
// and inline code spans are skipped.
func links(text string) []link {
	var out []link
	fenced := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range linkPattern.FindAllStringSubmatch(withoutCodeSpans(line), -1) {
			out = append(out, link{target: m[1], line: i + 1})
		}
	}
	return out
}

var citation = regexp.MustCompile(`docs/[A-Za-z0-9_./-]+\.md(#[a-z0-9_-]+)?`)

// citations returns the docs/… pages a Go file's text cites.
func citations(text string) []link {
	var out []link
	for i, line := range strings.Split(text, "\n") {
		for _, m := range citation.FindAllString(line, -1) {
			out = append(out, link{target: m, line: i + 1})
		}
	}
	return out
}

var codeSpan = regexp.MustCompile("`[^`]*`")

func withoutCodeSpans(line string) string { return codeSpan.ReplaceAllString(line, "") }

// problem says what is wrong with l in file from, or "".
func (l link) problem(from string, anchorsOf func(string) (map[string]bool, error)) string {
	t := l.target
	if strings.Contains(t, "://") || strings.HasPrefix(t, "mailto:") {
		return ""
	}
	path, fragment, _ := strings.Cut(t, "#")
	target := from
	if path != "" {
		target = filepath.Join(filepath.Dir(from), path)
		fi, err := os.Stat(target)
		if err != nil {
			return "no such file"
		}
		if fi.IsDir() {
			return "a directory: link to a file in it"
		}
	}
	if fragment == "" {
		return ""
	}
	if !strings.HasSuffix(target, ".md") {
		return ""
	}
	a, err := anchorsOf(target)
	if err != nil {
		return err.Error()
	}
	if !a[fragment] {
		return "no heading with this anchor in " + target
	}
	return ""
}

// headingAnchors returns the anchors GitHub gives the headings of text:
// lower case, punctuation dropped, spaces as hyphens, and -1, -2 … for a
// repeated one.
func headingAnchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		slug := slugify(title)
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

func slugify(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}
