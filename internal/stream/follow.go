package stream

import (
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// pollInterval is how often a follower without inotify looks at the file:
// short enough to add no noticeable latency, long enough to cost nothing.
const pollInterval = 25 * time.Millisecond

// Follower reads a regular file that another process is still writing (the
// CLI's stdout: a file, not a pipe, see docs/design.md §F13). At the end of
// the file it waits for the file to change instead of returning io.EOF, and
// returns io.EOF only once the writer has exited and everything is read.
//
// Read is not safe for concurrent use; Close may be called from any
// goroutine, and unblocks a waiting Read.
type Follower struct {
	file    *os.File
	exited  <-chan struct{}
	changed chan struct{} // one pending wake-up at most: the file may have grown
	done    chan struct{} // closed by Close
	watcher *os.File      // the inotify instance; nil when polling from the start
	polling atomic.Bool
	wg      sync.WaitGroup

	closeOnce sync.Once
	closeErr  error

	draining bool        // exited was seen: read to the true end, then io.EOF
	retired  atomic.Bool // the inotify instance is being released early
}

// Follow opens path for reading. exited must be closed once the writer is
// gone for good; until then the end of the file is only where the writer
// has got to. The file change notifications come from inotify when it is
// available, else from polling.
func Follow(path string, exited <-chan struct{}) (*Follower, error) {
	return follow(path, exited, false)
}

// follow is Follow with polling forced, for tests of the fallback.
func follow(path string, exited <-chan struct{}, forcePoll bool) (*Follower, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	f := &Follower{
		file:    file,
		exited:  exited,
		changed: make(chan struct{}, 1),
		done:    make(chan struct{}),
	}
	// The watch is in place before the first Read, so a write that lands
	// after that Read saw the end of the file cannot go unnoticed.
	if !forcePoll {
		f.watcher, _ = watchFile(path) // no inotify (EMFILE, ...): poll instead
	}
	f.wg.Add(1)
	if f.watcher != nil {
		go f.watch()
	} else {
		f.polling.Store(true)
		go f.poll()
	}
	return f, nil
}

// Polling reports whether the follower polls the file instead of being
// told of changes by inotify.
func (f *Follower) Polling() bool { return f.polling.Load() }

// Read reads what the file holds, waiting at its end until it grows or the
// writer exits. After Close it returns os.ErrClosed.
func (f *Follower) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		select {
		case <-f.done:
			return 0, os.ErrClosed
		default:
		}
		n, err := f.file.Read(p)
		if n > 0 {
			return n, nil
		}
		if err != nil && err != io.EOF {
			return 0, err
		}
		if f.draining {
			return 0, io.EOF
		}
		select {
		case <-f.done:
			return 0, os.ErrClosed
		case <-f.exited:
			// Whatever the writer wrote is in the file now: one more
			// pass to the end, and that end is final.
			f.draining = true
			f.retireWatcher()
		case <-f.changed:
		}
	}
}

// retireWatcher releases the inotify instance once no more changes matter.
// In the background: the kernel can take 10-20 ms to tear an instance down,
// and this way that overlaps the rest of the run's end instead of adding to
// it (a process that exits with the instance open pays the same wait).
func (f *Follower) retireWatcher() {
	if f.watcher != nil && !f.retired.Swap(true) {
		go f.watcher.Close()
	}
}

// Close stops following, unblocks a waiting Read and releases the file,
// the inotify instance and the goroutine that serves them.
func (f *Follower) Close() error {
	f.closeOnce.Do(func() {
		close(f.done)
		if f.watcher != nil && !f.retired.Swap(true) {
			f.watcher.Close() // unblocks the watch goroutine's Read
		}
		f.wg.Wait()
		f.closeErr = f.file.Close()
	})
	return f.closeErr
}

// watch turns inotify events into wake-ups. The inotify file is in the
// netpoller, so waiting on it holds no thread and Close interrupts it.
func (f *Follower) watch() {
	defer f.wg.Done()
	buf := make([]byte, 4096) // room for many events: a file watch has no names
	for {
		if _, err := f.watcher.Read(buf); err != nil {
			if f.retired.Load() {
				return // released on purpose: the writer has exited
			}
			select {
			case <-f.done:
				return
			default:
			}
			// inotify broke down under us: keep the follower alive.
			f.polling.Store(true)
			f.signal()
			f.pollLoop()
			return
		}
		f.signal()
	}
}

func (f *Follower) poll() {
	defer f.wg.Done()
	f.pollLoop()
}

func (f *Follower) pollLoop() {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		select {
		case <-f.done:
			return
		case <-t.C:
			f.signal()
		}
	}
}

func (f *Follower) signal() {
	select {
	case f.changed <- struct{}{}:
	default: // a wake-up is already pending; one is enough
	}
}
