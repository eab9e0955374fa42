package transcript

import (
	"os"

	"golang.org/x/sys/unix"
)

// watchFile returns an inotify instance watching path for writes. The fd is
// non-blocking so that os.NewFile puts it in the netpoller: a Read on it
// waits without a thread and Close interrupts it.
func watchFile(path string) (*os.File, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, err
	}
	if _, err := unix.InotifyAddWatch(fd, path, unix.IN_MODIFY|unix.IN_CLOSE_WRITE); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), "inotify"), nil
}
