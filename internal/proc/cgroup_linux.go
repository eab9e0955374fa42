package proc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Linux's cgroup v2 side of cgroup.go.

// CanContain: the kernel has cgroup v2 (whether malarun may make a group
// is known only by trying: NewCgroup).
const CanContain = true

// maxCgroupFile bounds what is read from a cgroup's files (cgroup.procs of
// a run: a pid per line).
const maxCgroupFile = 4 << 20

// NewCgroup makes the group name under malarun's own cgroup (anew, if an
// earlier malarun of the run left it). It fails where there is no cgroup
// v2 hierarchy, where malarun's own group cannot be found in it, where
// malarun may not make groups there (not root and not delegated; a
// container whose /sys/fs/cgroup is read-only), and where the kernel would
// not start a process in it (admits).
func NewCgroup(name string) (*Cgroup, error) {
	if !strings.HasPrefix(name, cgroupPrefix) || strings.ContainsAny(name, "/\x00") {
		return nil, fmt.Errorf("cgroup name %q is not one malarun makes", name)
	}
	own, err := ownCgroupDir()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(own, name)
	err = os.Mkdir(path, 0o755)
	if errors.Is(err, os.ErrExist) {
		// Left by an earlier malarun of the run that was killed outright
		// before the reclaim that removes it (one killed while it waited
		// for a usage limit's reset is not reclaimed: its run is
		// continued). What is in it is a leftover. The group is ended,
		// removed and made anew: a group once written cgroup.kill kills
		// every child later cloned into it (docs/design.md §F31).
		if err := removeLeftGroup(path); err != nil {
			return nil, err
		}
		err = os.Mkdir(path, 0o755)
	}
	if err != nil {
		return nil, fmt.Errorf("make the run's cgroup: %w", err)
	}
	dir, err := openCgroupDir(path)
	if err != nil {
		return nil, err
	}
	c := &Cgroup{Path: path, dir: dir}
	if err := c.admits(); err != nil {
		c.dir.Close()
		_ = unix.Rmdir(path)
		return nil, err
	}
	return c, nil
}

// removeLeftGroup ends what an earlier malarun of the run left in its group
// and removes the group.
func removeLeftGroup(path string) error {
	dir, err := openCgroupDir(path)
	if err != nil {
		return err
	}
	return (&Cgroup{Path: path, dir: dir}).Remove()
}

// admits checks, before the run relies on the group, that the kernel lets
// a process start in it: a child is cloned into it as the CLI will be
// (clone3, CLONE_INTO_CGROUP) and told to run "/", which no kernel runs.
// Its exec failing (EACCES) proves it got in alive. A child that never
// came back from the clone with an error was killed on its way in: Linux
// 6.14 and later compare the cgroup.kill count of malarun's own group with
// the target's, and kill the child when they differ (§F31). A refused
// clone3 (ENOSYS under qemu's user mode, EBUSY in threaded mode) is an
// error too. Costs one vfork per run.
func (c *Cgroup) admits() error {
	attr := &syscall.ProcAttr{Sys: &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: c.fd()}}
	pid, err := syscall.ForkExec("/", []string{"malarun-cgroup-check"}, attr)
	switch {
	case errors.Is(err, syscall.EACCES):
		return nil
	case err != nil:
		return fmt.Errorf("the kernel will not start a process in cgroup %s: %w", c.Path, err)
	}
	var ws unix.WaitStatus
	_, _ = unix.Wait4(pid, &ws, 0, nil)
	return fmt.Errorf("the kernel kills every process started in cgroup %s (a check process ended with %v before it could run anything)", c.Path, describeWait(ws))
}

// describeWait says how a process ended.
func describeWait(ws unix.WaitStatus) string {
	if ws.Signaled() {
		return "signal " + ws.Signal().String()
	}
	return "exit " + strconv.Itoa(ws.ExitStatus())
}

// openCgroupDir opens path as a folder of a cgroup v2 file system,
// following no link: a recorded path may be hostile.
func openCgroupDir(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open cgroup %s: %w", path, err)
	}
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil || st.Type != unix.CGROUP2_SUPER_MAGIC {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("%s is not in a cgroup v2 file system", path)
	}
	return os.NewFile(uintptr(fd), path), nil
}

// ownCgroupDir is the folder of malarun's own cgroup v2 group: its path in
// /proc/self/cgroup ("0::/path") under the cgroup2 mount that holds it.
func ownCgroupDir() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	rel := ""
	found := false
	for line := range strings.SplitSeq(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			rel, found = p, true
		}
	}
	if !found || !strings.HasPrefix(rel, "/") || strings.HasSuffix(rel, " (deleted)") {
		return "", errors.New("malarun is in no cgroup v2 group (cgroup v1 only)")
	}
	mi, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer mi.Close()
	return cgroupMountDir(mi, rel)
}

// cgroupMountDir finds, in mountinfo, the cgroup2 mount whose root holds
// the group rel, and returns rel's folder under it.
func cgroupMountDir(mountinfo io.Reader, rel string) (string, error) {
	sc := bufio.NewScanner(mountinfo)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - fstype source super
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 1 || g[0] != "cgroup2" {
			continue
		}
		root, point := unescapeMount(f[3]), unescapeMount(f[4])
		if root == "/" {
			return filepath.Join(point, rel), nil
		}
		if sub, ok := strings.CutPrefix(rel, root); ok && (sub == "" || sub[0] == '/') {
			return filepath.Join(point, sub), nil
		}
	}
	return "", errors.New("no cgroup2 file system is mounted where malarun's group is")
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
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

// pids lists the processes in the group now (zombies have left it).
func (c *Cgroup) pids() []int {
	if c == nil || c.dir == nil {
		return nil
	}
	return readPids(c.dir, "cgroup.procs")
}

func readPids(dir *os.File, name string) []int {
	b, err := readSmallAt(int(dir.Fd()), name, maxCgroupFile)
	if err != nil {
		return nil
	}
	var out []int
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if pid, err := strconv.Atoi(string(line)); err == nil && pid > 0 {
			out = append(out, pid)
		}
	}
	return out
}

// openAt opens one of the group's files through its folder's descriptor,
// so a group whose folder was replaced is never confused with another.
func openAt(dir *os.File, name string, flags int) (*os.File, error) {
	fd, err := unix.Openat(int(dir.Fd()), name, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

// populated reads cgroup.events: whether a live process is in the group
// or below it.
func (c *Cgroup) populated() bool {
	b, err := readSmallAt(int(c.dir.Fd()), "cgroup.events", 4096)
	if err != nil {
		return false
	}
	return bytes.Contains(b, []byte("populated 1"))
}

// kill ends every process in the group and below it (killAll), and waits
// up to maxKillTime for the group to be empty. It reports whether it is.
func (c *Cgroup) kill() bool {
	if c == nil || c.dir == nil {
		return true
	}
	until := time.Now().Add(maxKillTime)
	for {
		c.killAll()
		if !c.populated() {
			return true
		}
		if time.Now().After(until) {
			return false
		}
		time.Sleep(pollEvery)
	}
}

// killAll sends SIGKILL to every process in the group and below it: by
// cgroup.kill (Linux 5.14), which takes what is being forked too; before
// it, with the group frozen (freeze, kill each, thaw), so nothing forks
// between the list and the signals. A group once written cgroup.kill
// takes no new child until Ready made it anew (§F31).
func (c *Cgroup) killAll() {
	if c == nil || c.dir == nil {
		return
	}
	if c.write("cgroup.kill", "1") == nil {
		c.killed = true
		return
	}
	frozen := c.write("cgroup.freeze", "1") == nil
	for _, pid := range c.subtreePids() {
		_ = unix.Kill(pid, unix.SIGKILL)
	}
	if frozen {
		_ = c.write("cgroup.freeze", "0")
	}
}

// thaw unfreezes the group (a tool may write 1 to its own group's
// cgroup.freeze): a frozen process acts on no signal but SIGKILL, and a
// child cloned into a frozen group never reaches exec.
func (c *Cgroup) thaw() {
	if c == nil || c.dir == nil {
		return
	}
	if b, err := readSmallAt(int(c.dir.Fd()), "cgroup.freeze", 16); err == nil && bytes.HasPrefix(b, []byte("1")) {
		_ = c.write("cgroup.freeze", "0")
	}
}

// write writes one of the group's files.
func (c *Cgroup) write(name, value string) error {
	f, err := openAt(c.dir, name, unix.O_WRONLY)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Write([]byte(value))
	return err
}

// Ready makes the group fit to start the next child in: thawed, and made
// anew if it was written cgroup.kill (the kernel would kill every child
// cloned into it: §F31). An error means the run goes on without it.
func (c *Cgroup) Ready() error {
	if c == nil || c.dir == nil || c.refused != nil {
		return nil
	}
	c.thaw()
	if !c.killed {
		return nil
	}
	if !c.kill() {
		return fmt.Errorf("cgroup %s still holds processes after SIGKILL", c.Path)
	}
	c.dir.Close()
	c.dir = nil
	if err := removeGroups(c.Path); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("remove cgroup %s to make it anew: %w", c.Path, err)
	}
	if err := os.Mkdir(c.Path, 0o755); err != nil {
		return fmt.Errorf("make cgroup %s anew: %w", c.Path, err)
	}
	dir, err := openCgroupDir(c.Path)
	if err != nil {
		return err
	}
	c.dir, c.killed = dir, false
	return nil
}

// Remove ends whatever is still in the group and removes it. It reports
// an error if the group could not be emptied or removed (a process stuck
// in the kernel): it is left for the next malarun of the run.
func (c *Cgroup) Remove() error {
	if c == nil || c.dir == nil {
		return nil
	}
	defer func() {
		c.dir.Close()
		c.dir = nil
	}()
	if !c.kill() {
		return fmt.Errorf("cgroup %s still holds processes after SIGKILL", c.Path)
	}
	// Groups below it (a malarun run by the agent makes its own run's
	// group there) go first: a group with children cannot be removed.
	if err := removeGroups(c.Path); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("remove cgroup %s: %w", c.Path, err)
	}
	return nil
}

// removeGroups removes the group at path and every group below it,
// deepest first (a cgroup folder holds only the kernel's files and its
// child groups).
func removeGroups(path string) error {
	entries, _ := os.ReadDir(path)
	for _, e := range entries {
		if e.IsDir() && e.Type()&os.ModeSymlink == 0 {
			if err := removeGroups(filepath.Join(path, e.Name())); err != nil && !errors.Is(err, unix.ENOENT) {
				return err
			}
		}
	}
	return rmdirGroup(path)
}

// rmdirGroup removes one emptied group. The kernel answers EBUSY while a
// process that has just died is still leaving it (runc retries too): that
// is tried again, for at most maxKillTime.
func rmdirGroup(path string) error {
	until := time.Now().Add(maxKillTime)
	for {
		err := unix.Rmdir(path)
		if !errors.Is(err, unix.EBUSY) || time.Now().After(until) {
			return err
		}
		time.Sleep(pollEvery)
	}
}

// subtreePids lists the processes in the group and below it, through the
// group's descriptor: no link is followed (a group below it is opened
// O_NOFOLLOW, relative to its parent).
func (c *Cgroup) subtreePids() []int {
	if c == nil || c.dir == nil {
		return nil
	}
	return subtreeAt(c.dir, 0)
}

// maxGroupDepth bounds how deep below the run's group groups are read (a
// malarun run by the agent makes its own there, and so on).
const maxGroupDepth = 16

func subtreeAt(dir *os.File, depth int) []int {
	pids := readPids(dir, "cgroup.procs")
	if depth >= maxGroupDepth {
		return pids
	}
	entries, _ := readDirFD(int(dir.Fd()))
	for _, e := range entries {
		if !e.folder {
			continue // a group's files: only its folders are groups
		}
		fd, err := unix.Openat(int(dir.Fd()), e.name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // a link, or gone: not a group
		}
		sub := os.NewFile(uintptr(fd), e.name)
		pids = append(pids, subtreeAt(sub, depth+1)...)
		sub.Close()
	}
	return pids
}

// EndCgroup ends the processes left in a run's group by a malarun that
// died, and removes the group: SIGTERM to each, up to grace for them to
// exit, then cgroup.kill. path comes from the run's record, so it is
// trusted only if it is a clean absolute path ending in name (CgroupName
// of the run's marker) and is a folder of a cgroup v2 file system, reached
// through no link. It returns how many processes it found.
func EndCgroup(path, name string, grace time.Duration) (found int, err error) {
	if path == "" {
		return 0, nil
	}
	if !filepath.IsAbs(path) || filepath.Clean(path) != path || filepath.Base(path) != name || !strings.HasPrefix(name, cgroupPrefix) {
		return 0, fmt.Errorf("recorded cgroup %q is not this run's", path)
	}
	if real, err := filepath.EvalSymlinks(path); errors.Is(err, os.ErrNotExist) {
		return 0, nil // already gone (removed, or a reboot since)
	} else if err != nil {
		return 0, err
	} else if real != path {
		return 0, fmt.Errorf("recorded cgroup %q leads elsewhere (%s)", path, real)
	}
	dir, err := openCgroupDir(path)
	if err != nil {
		return 0, err
	}
	c := &Cgroup{Path: path, dir: dir}
	var refs []Ref
	for _, pid := range c.pids() {
		if st, err := StartTime(pid); err == nil {
			refs = append(refs, Ref{Pid: pid, StartTime: st})
		}
	}
	endRefs(refs, grace)
	return len(refs), c.Remove()
}
