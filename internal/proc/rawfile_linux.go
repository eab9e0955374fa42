package proc

import (
	"encoding/binary"
	"os"

	"golang.org/x/sys/unix"
)

// The small kernel files a stop and the reaper read again and again
// (/proc/<pid>/stat, the lists of children, a task folder, a group's
// cgroup.procs) are read with plain system calls. An os.File registers
// each descriptor with Go's poller first: four fcntl calls and an
// epoll_ctl that /proc and cgroupfs refuse, more work than the read
// itself, for files that never block.

// readSmall reads the file at path, at most limit bytes.
func readSmall(path string, limit int) ([]byte, error) {
	fd, err := openRetry(func() (int, error) { return unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0) })
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	return readFD(fd, limit)
}

// readSmallAt reads the file name in the folder dirfd, following no link,
// at most limit bytes.
func readSmallAt(dirfd int, name string, limit int) ([]byte, error) {
	fd, err := openRetry(func() (int, error) {
		return unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, &os.PathError{Op: "openat", Path: name, Err: err}
	}
	defer unix.Close(fd)
	return readFD(fd, limit)
}

func openRetry(open func() (int, error)) (int, error) {
	for {
		fd, err := open()
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// readFD reads fd to its end, at most limit bytes.
func readFD(fd, limit int) ([]byte, error) {
	buf := make([]byte, 0, min(512, limit))
	for len(buf) < limit {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):min(cap(buf), limit)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return buf, err
		}
		if n == 0 {
			break
		}
		buf = buf[:len(buf)+n]
	}
	return buf, nil
}

// dirEntry is one name in a folder, and whether the kernel says it is a
// folder (d_type; DT_UNKNOWN counts as one, to be opened and seen).
type dirEntry struct {
	name   string
	folder bool
}

// readDirFD lists the folder fd from its start, "." and ".." left out.
func readDirFD(fd int) ([]dirEntry, error) {
	if _, err := unix.Seek(fd, 0, 0); err != nil {
		return nil, err
	}
	var out []dirEntry
	buf := make([]byte, 8192)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return out, err
		}
		if n <= 0 {
			return out, nil
		}
		out = parseDirents(buf[:n], out)
	}
}

// parseDirents appends the entries of linux_dirent64 records: inode (8
// bytes), offset (8), record length (2), type (1), name (NUL-ended).
func parseDirents(b []byte, out []dirEntry) []dirEntry {
	for len(b) >= 19 {
		reclen := int(binary.NativeEndian.Uint16(b[16:18]))
		if reclen < 19 || reclen > len(b) {
			break
		}
		typ, name := b[18], b[19:reclen]
		for i, c := range name {
			if c == 0 {
				name = name[:i]
				break
			}
		}
		if s := string(name); s != "." && s != ".." && s != "" {
			out = append(out, dirEntry{name: s, folder: typ == unix.DT_DIR || typ == unix.DT_UNKNOWN})
		}
		b = b[reclen:]
	}
	return out
}
