package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func write(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

func TestReadMounts_FindsTheHierarchiesOfBothVersions(t *testing.T) {
	t.Parallel()
	m, err := readMounts(write(t, `22 1 0:21 / /proc rw - proc proc rw
30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
38 30 0:35 /kubepods/pod1 /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 30 0:36 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct
41 30 0:37 / /sys/fs/cgroup/unified\040dir rw shared:9 - cgroup2 cgroup2 rw,nsdelegate
`))
	require.NoError(t, err)
	require.Equal(t, mount{point: "/sys/fs/cgroup/memory", root: "/"}, m.v1[controllerMemory])
	require.Equal(t, mount{point: "/sys/fs/cgroup/pids", root: "/kubepods/pod1"}, m.v1[controllerPids])
	require.Equal(t, &mount{point: "/sys/fs/cgroup/unified dir", root: "/"}, m.v2, "octal escapes are undone")

	dir, ok := m.v1[controllerPids].dirOf("/kubepods/pod1/worker")
	require.True(t, ok)
	require.Equal(t, "/sys/fs/cgroup/pids/worker", dir, "a mount of a subtree shows the paths below its root")
	_, ok = m.v1[controllerPids].dirOf("/elsewhere")
	require.False(t, ok)
}

func TestReadSelfCgroups_ReadsV1ControllersAndTheV2Path(t *testing.T) {
	t.Parallel()
	s, err := readSelfCgroups(write(t, "12:pids:/system.slice/azolla.service\n4:memory:/x\n2:cpu,cpuacct:/\n0::/system.slice/azolla.service\n"))
	require.NoError(t, err)
	require.Equal(t, "/system.slice/azolla.service", s.v1[controllerPids])
	require.Equal(t, "/x", s.v1[controllerMemory])
	require.Equal(t, "/system.slice/azolla.service", s.v2)
}
