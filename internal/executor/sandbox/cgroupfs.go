package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// mount is a cgroup file system mount.
type mount struct{ point, root string }

// dirOf is the directory of cgroup path p under m, when m shows it.
func (m mount) dirOf(p string) (string, bool) {
	if p == "" {
		return "", false
	}
	if m.root == "/" {
		return filepath.Join(m.point, p), true
	}
	if within(m.root, p) {
		return filepath.Join(m.point, strings.TrimPrefix(p, m.root)), true
	}
	return "", false
}

type mounts struct {
	v1 map[controller]mount
	v2 *mount
}

// readMounts reads the cgroup mounts of /proc/self/mountinfo: fields are
// "id parent dev root mountpoint options [optional...] - fstype source super".
func readMounts(file string) (mounts, error) {
	out := mounts{v1: map[controller]mount{}}
	b, err := os.ReadFile(file)
	if err != nil {
		return out, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 3 {
			continue
		}
		m := mount{point: unescapeMount(f[4]), root: unescapeMount(f[3])}
		switch g[0] {
		case "cgroup2":
			if out.v2 == nil {
				out.v2 = &m
			}
		case "cgroup":
			for _, opt := range strings.Split(g[2], ",") {
				if ctl := controller(opt); slices.Contains(controllers, ctl) {
					if _, seen := out.v1[ctl]; !seen {
						out.v1[ctl] = m
					}
				}
			}
		}
	}
	return out, nil
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

type selfCgroups struct {
	v1 map[controller]string
	v2 string
}

// readSelfCgroups reads /proc/self/cgroup: "id:controllers:path" lines,
// "0::path" for cgroup v2.
func readSelfCgroups(file string) (selfCgroups, error) {
	out := selfCgroups{v1: map[controller]string{}}
	b, err := os.ReadFile(file)
	if err != nil {
		return out, err
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			out.v2 = parts[2]
			continue
		}
		for _, ctl := range strings.Split(parts[1], ",") {
			if c := controller(ctl); slices.Contains(controllers, c) {
				out.v1[c] = parts[2]
			}
		}
	}
	return out, nil
}
