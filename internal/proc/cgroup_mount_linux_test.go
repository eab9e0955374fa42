package proc

import (
	"strings"
	"testing"
)

// Where malarun's group lies, from its line of /proc/self/cgroup and the
// mount table, for the layouts it meets: systemd's unified hierarchy, the
// hybrid one (cgroup2 under /sys/fs/cgroup/unified), a container whose
// cgroup namespace makes its group the root, a bind mount of a subtree,
// and none at all.
func TestCgroupMountDir(t *testing.T) {
	const (
		unified = "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"
		hybrid  = "35 27 0:30 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n" +
			"36 27 0:31 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
		bound  = "40 30 0:26 /kubepods/pod1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
		spaced = `41 30 0:26 / /mnt/my\040cgroups rw - cgroup2 cgroup2 rw` + "\n"
		v1only = "35 27 0:30 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
	)
	for _, tc := range []struct {
		mountinfo, rel, want string
	}{
		{unified, "/user.slice/user-1000.slice/session-3.scope", "/sys/fs/cgroup/user.slice/user-1000.slice/session-3.scope"},
		{hybrid, "/", "/sys/fs/cgroup/unified"},
		{unified, "/", "/sys/fs/cgroup"},
		{bound, "/kubepods/pod1/c1", "/sys/fs/cgroup/c1"},
		{bound, "/kubepods/pod10", ""}, // a sibling that only shares the prefix
		{spaced, "/a", "/mnt/my cgroups/a"},
		{v1only, "/", ""},
	} {
		got, err := cgroupMountDir(strings.NewReader(tc.mountinfo), tc.rel)
		if got != tc.want || (err != nil) != (tc.want == "") {
			t.Errorf("%q in %q: got %q, %v; want %q", tc.rel, tc.mountinfo, got, err, tc.want)
		}
	}
}
