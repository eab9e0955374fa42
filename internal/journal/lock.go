package journal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	// Builds only for the kernels malarun supports, with one clear error elsewhere.
	_ "github.com/malarun/malarun/internal/platform"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/statefile"
)

// keepEvery is how often a held lock's file is checked for removal. A lock
// on a removed file protects nothing: the next malarun creates a new file
// and locks that. Between checks only a malarun that cannot see this one
// (another host, another PID namespace) could take the issue: one on the
// same machine and namespace finds this one alive from the record's owner
// (supervisor, docs/design.md §D7). Two stats every 2 s cost nothing a run
// would notice.
const keepEvery = 2 * time.Second

// lockHolder is the held lock of one issue: the flock'ed file, made again
// and locked again when it is removed or replaced while held.
type lockHolder struct {
	path, issue, holder string

	mu      sync.Mutex
	f       *os.File
	lostErr *LostError
	lostC   chan struct{} // closed when lostErr is set
	// owner is the owner of the record last saved: while the record on
	// disk still names it, a malarun holding a new lock file is only
	// looking (it finds the owner alive and exits 7), not taking over.
	owner record.Owner
	stop  chan struct{}
	done  chan struct{}
}

// LostError says another malarun took the issue after its lock file was
// removed: this one no longer holds it and must not write its record.
type LostError struct {
	Issue  string
	Holder string // what the new lock file says about its holder
}

func (e *LostError) Error() string {
	return fmt.Sprintf("another malarun (%s) took issue %s over after its lock file was removed; this malarun no longer holds it", e.Holder, e.Issue)
}

func takeLock(path, issue, holder string) (*lockHolder, error) {
	f, err := openLocked(path, issue)
	if err != nil {
		return nil, err
	}
	l := &lockHolder{path: path, issue: issue, holder: holder, f: f, lostC: make(chan struct{})}
	l.writeHolder()
	return l, nil
}

// openLocked opens and locks the lock file at path, and makes sure the
// lock is on the file the path names now: one removed or replaced between
// the open and the lock would be a lock no other malarun sees.
func openLocked(path, issue string) (*os.File, error) {
	for range 10 {
		// The safe open (statefile): the file is truncated once locked, so
		// a symlink planted in its place must not lead that elsewhere, and
		// a FIFO there must not hold the open.
		f, err := statefile.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		var notRegular *statefile.NotRegularError
		switch {
		case errors.As(err, &notRegular) && notRegular.Mode&fs.ModeSymlink != 0:
			return nil, fmt.Errorf("the lock %s is a symbolic link, not a regular file: remove it (no malarun made it)", path)
		case errors.As(err, &notRegular):
			return nil, fmt.Errorf("the lock %s is not a regular file: remove it (no malarun made it)", path)
		case err != nil:
			return nil, fmt.Errorf("open the lock: %w", err)
		}
		if err := lockBriefly(f); err != nil {
			b := make([]byte, 512)
			n, _ := f.ReadAt(b, 0)
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, &BusyError{Issue: issue, Holder: strings.TrimSpace(string(b[:n]))}
			}
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if names(path, f) {
			return f, nil
		}
		f.Close()
	}
	return nil, fmt.Errorf("lock %s: the file kept being replaced as it was locked", path)
}

// lockBriefly takes the lock without waiting for a run that holds it, but
// lets a moment's shared lock pass: `malarun status` probes with one.
func lockBriefly(f *os.File) error {
	var err error
	for range 10 {
		if err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); !errors.Is(err, unix.EWOULDBLOCK) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
	return err
}

// names reports whether path is the open file f (or a link to it).
func names(path string, f *os.File) bool { return sameFile(path, f, os.Stat) }

// sameFile reports whether stat of path says it is the open file f.
func sameFile(path string, f *os.File, stat func(string) (os.FileInfo, error)) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := stat(path)
	return err == nil && os.SameFile(a, b)
}

func (l *lockHolder) writeHolder() {
	if err := l.f.Truncate(0); err == nil {
		_, _ = l.f.WriteAt([]byte(l.holder+"\n"), 0)
	}
}

// keep checks the lock every interval until release.
func (l *lockHolder) keep(every time.Duration) {
	l.stop, l.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(l.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-l.stop:
				return
			case <-tick.C:
				if l.check() != nil {
					return
				}
			}
		}
	}()
}

// check takes the lock again if its file is no longer the one held: made
// again (with its folder, if that went too) and locked. It fails, for good,
// only when another malarun holds the new file and the record names
// another owner than the one this malarun saved: it took the run over.
// One that only holds the file (it is checking the owner, and will exit 7)
// is waited out: the lock is taken again at a later check.
func (l *lockHolder) check() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lostErr != nil {
		return l.lostErr
	}
	if names(l.path, l.f) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return nil // nothing to lock in; the record's save will say why
	}
	f, err := openLocked(l.path, l.issue)
	if err != nil {
		if busy, ok := errors.AsType[*BusyError](err); ok && l.tookOver() {
			l.lostErr = &LostError{Issue: l.issue, Holder: busy.Holder}
			close(l.lostC)
			return l.lostErr
		}
		return nil // tried again at the next check
	}
	l.f.Close()
	l.f = f
	l.writeHolder()
	return nil
}

// tookOver reports whether the record on disk names another owner than
// the one this malarun last saved. Called with l.mu held.
func (l *lockHolder) tookOver() bool {
	if l.owner.Pid == 0 {
		return false // nothing saved yet: nothing to tell by
	}
	r, err := ReadRecord(filepath.Join(filepath.Dir(l.path), RecordFile))
	if err != nil {
		return false
	}
	o := r.Owner
	return o.Pid != l.owner.Pid || o.StartTime != l.owner.StartTime || o.Host != l.owner.Host || !o.StartedAt.Equal(l.owner.StartedAt)
}

// saving notes the owner of a record about to be saved.
func (l *lockHolder) saving(o record.Owner) {
	l.mu.Lock()
	l.owner = o
	l.mu.Unlock()
}

// lost is the LostError once the lock is lost, else nil.
func (l *lockHolder) lost() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lostErr == nil {
		return nil
	}
	return l.lostErr
}

func (l *lockHolder) release() {
	if l.stop != nil {
		close(l.stop)
		<-l.done
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lostErr == nil {
		_ = l.f.Truncate(0)
	}
	l.f.Close()
}

// locked tests an issue's lock without taking it for long.
func locked(dir string) bool {
	f, err := statefile.Open(filepath.Join(dir, LockFile))
	if err != nil {
		return false
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil {
		return true
	}
	_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return false
}
