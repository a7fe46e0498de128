package gitops

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// maxBranchLen bounds a branch name; git has no limit of its own, but file
// systems do and no sane branch comes near it.
const maxBranchLen = 200

// allowedSchemes are the URL schemes ValidateRepository accepts.
var allowedSchemes = map[string]bool{"https": true, "http": true, "ssh": true, "git": true, "file": true}

// ValidateRepository accepts repo if git can only read it as a repository
// location: an absolute local path, a URL with scheme https, http, ssh, git
// or file, or an scp-like user@host:path. Everything else is refused with an
// error wrapping ErrInvalidRepository that says why, in particular anything
// git could parse as an option and the <transport>::<address> syntax that
// runs a remote helper.
func ValidateRepository(repo string) error {
	bad := func(why string) error { return fmt.Errorf("%w %q: %s", ErrInvalidRepository, repo, why) }
	switch {
	case repo == "":
		return bad("empty")
	case strings.HasPrefix(repo, "-"):
		return bad("starts with '-'")
	case hasControl(repo):
		return bad("contains a control character")
	case isRemoteHelper(repo):
		return bad("<transport>::<address> remote helpers are not allowed")
	}
	if strings.HasPrefix(repo, "/") {
		if filepath.Clean(repo) == "/" {
			return bad("the file system root is not a repository")
		}
		return nil
	}
	if scheme, _, ok := strings.Cut(repo, "://"); ok && isScheme(scheme) {
		return validateURL(repo, strings.ToLower(scheme), bad)
	}
	if user, rest, ok := strings.Cut(repo, "@"); ok {
		if host, path, ok := strings.Cut(rest, ":"); ok && !strings.Contains(host, "/") {
			return validateSCP(user, host, path, bad)
		}
	}
	return bad("not an absolute path, an https/http/ssh/git/file URL or user@host:path")
}

func validateURL(repo, scheme string, bad func(string) error) error {
	if !allowedSchemes[scheme] {
		return bad("scheme " + scheme + " is not allowed")
	}
	u, err := url.Parse(repo)
	if err != nil {
		return bad("not a URL: " + err.Error())
	}
	if scheme == "file" {
		if u.Host != "" && u.Host != "localhost" {
			return bad("a file URL may not name a host")
		}
		if !strings.HasPrefix(u.Path, "/") || u.Path == "/" {
			return bad("a file URL needs an absolute path")
		}
		return nil
	}
	switch host := u.Hostname(); {
	case host == "":
		return bad("no host")
	case strings.HasPrefix(host, "-"):
		return bad("host starts with '-'")
	case u.User != nil && strings.HasPrefix(u.User.Username(), "-"):
		return bad("user starts with '-'")
	}
	return nil
}

func validateSCP(user, host, path string, bad func(string) error) error {
	switch {
	case user == "" || !isHostChars(user, "._-"):
		return bad("scp-like user must be letters, digits, '.', '_' or '-'")
	case host == "" || !isHostChars(host, ".-"):
		return bad("scp-like host must be letters, digits, '.' or '-'")
	case strings.HasPrefix(user, "-") || strings.HasPrefix(host, "-"):
		return bad("scp-like user or host starts with '-'")
	case path == "" || strings.HasPrefix(path, "-"):
		return bad("scp-like path is empty or starts with '-'")
	}
	return nil
}

// isRemoteHelper reports whether git would hand repo to git-remote-<x>:
// like git, a run of URL scheme characters directly followed by "::".
func isRemoteHelper(repo string) bool {
	i := 0
	for i < len(repo) && isSchemeChar(repo[i], i == 0) {
		i++
	}
	return strings.HasPrefix(repo[i:], "::")
}

func isScheme(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isSchemeChar(s[i], i == 0) {
			return false
		}
	}
	return true
}

func isSchemeChar(c byte, first bool) bool {
	if isAlpha(c) {
		return true
	}
	return !first && (isDigit(c) || c == '+' || c == '.' || c == '-')
}

func isHostChars(s, extra string) bool {
	for i := 0; i < len(s); i++ {
		if !isAlpha(s[i]) && !isDigit(s[i]) && !strings.ContainsRune(extra, rune(s[i])) {
			return false
		}
	}
	return true
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// hasControl reports whether s holds an ASCII control character (NUL, tab
// and newline included) or DEL.
func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// ValidateBranch accepts name only if it is a plain branch name: letters,
// digits and "._/-", at most 200 bytes, no component that starts with '.' or
// ends in ".lock", no "..", "//" or "@{", not starting with '-' or '.', not
// ending in '/' or '.', and not "HEAD". Every name it accepts is also
// accepted by "git check-ref-format --branch"; it refuses some that git
// would take (non-ASCII, '+', ...). The error wraps ErrInvalidBranch.
func ValidateBranch(name string) error {
	bad := func(why string) error { return fmt.Errorf("%w %q: %s", ErrInvalidBranch, name, why) }
	switch {
	case name == "":
		return bad("empty")
	case len(name) > maxBranchLen:
		return bad(fmt.Sprintf("longer than %d bytes", maxBranchLen))
	case !isHostChars(name, "._/-"):
		return bad("only letters, digits and '.', '_', '/', '-' are allowed")
	case strings.HasPrefix(name, "-"):
		return bad("starts with '-'")
	case name == "HEAD":
		return bad("HEAD is not a branch name")
	case strings.Contains(name, ".."):
		return bad("contains '..'")
	case strings.Contains(name, "@{"):
		return bad("contains '@{'")
	case strings.HasSuffix(name, "."):
		return bad("ends with '.'")
	}
	for comp := range strings.SplitSeq(name, "/") {
		switch {
		case comp == "":
			return bad("has an empty component (leading, trailing or double '/')")
		case strings.HasPrefix(comp, "."):
			return bad("a component starts with '.'")
		case strings.HasSuffix(comp, ".lock"):
			return bad("a component ends with '.lock'")
		}
	}
	return nil
}

// validateCommit accepts a full SHA-1 or SHA-256 commit id in lowercase hex.
func validateCommit(sha string) error {
	if len(sha) != 40 && len(sha) != 64 {
		return fmt.Errorf("%w %q: want 40 or 64 lowercase hex digits", ErrInvalidCommit, sha)
	}
	for i := 0; i < len(sha); i++ {
		if !isDigit(sha[i]) && (sha[i] < 'a' || sha[i] > 'f') {
			return fmt.Errorf("%w %q: want 40 or 64 lowercase hex digits", ErrInvalidCommit, sha)
		}
	}
	return nil
}
