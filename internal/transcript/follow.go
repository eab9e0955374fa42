// Package transcript reads the CLI's transcript, its stdout as a file on
// disk (docs/design.md §F13): Follow reads it as the CLI writes it, waiting
// at its end (inotify, or polling) until the CLI has exited, and ReadResult
// reads a result line again to copy its whole text (§D16). It holds the
// files; what a line says is internal/stream's pure decoding.
package transcript

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
// It learns of changes from inotify, or by polling every pollInterval where
// inotify is unavailable, and while the writer is expected to exit
// (ExpectExit): the kernel takes 10-20 ms to tear an inotify instance down
// (docs/design.md §D23), and a process cannot exit before the teardown of
// an instance it closed ends, so the teardown is started while the writer
// is still finishing, not after it has exited.
//
// Read is not safe for concurrent use; Close, ExpectExit and Polling may be
// called from any goroutine, and Close unblocks a waiting Read.
type Follower struct {
	file    *os.File
	path    string
	exited  <-chan struct{}
	changed chan struct{} // one pending wake-up at most: the file may have grown
	done    chan struct{} // closed by Close

	mu     sync.Mutex
	notice *notice // what tells Read of changes now; nil once Close or the writer's exit ended it
	// noInotify: inotify could not be had (or broke): poll for good.
	noInotify bool

	closeOnce sync.Once
	closeErr  error

	draining bool // exited was seen: read to the true end, then io.EOF

	// consumed is how many bytes Read has returned: what the reader has
	// taken from the file, lines it has not decoded yet and a line not
	// ended yet included.
	consumed atomic.Int64
}

// notice is what wakes Read when the file may have grown: an inotify
// instance and the goroutine that reads it, or (watcher nil) polling, which
// Read does itself with a timer (no goroutine: a writer expected to exit
// is polled for a few milliseconds). stop ends the goroutine.
type notice struct {
	watcher *os.File
	stop    chan struct{}
}

// Size is how many bytes the writer has written so far (0 when it cannot
// be told, after Close). Safe beside Read: the driver asks it when a timer
// fires, to tell a silent writer from a reader that fell behind.
func (f *Follower) Size() int64 {
	st, err := f.file.Stat()
	if err != nil {
		return 0
	}
	return st.Size()
}

// Consumed is how many bytes Read has returned so far. Safe beside Read:
// with Size, it tells a reader still catching up (Consumed below Size)
// from a writer halfway through a line (the reader has everything there
// is, and waits for the rest of the line).
func (f *Follower) Consumed() int64 { return f.consumed.Load() }

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
	f := &Follower{file: file, path: path, exited: exited, noInotify: forcePoll,
		changed: make(chan struct{}, 1), done: make(chan struct{})}
	// The watch is in place before the first Read, so a write that lands
	// after that Read saw the end of the file cannot go unnoticed.
	f.mu.Lock()
	f.startNotice(!forcePoll)
	f.mu.Unlock()
	return f, nil
}

// startNotice starts the goroutine that tells Read of changes: an inotify
// watch when watch is true and inotify can be had, else a poll ticker.
// Called with f.mu held.
func (f *Follower) startNotice(watch bool) {
	n := &notice{stop: make(chan struct{})}
	if watch && !f.noInotify {
		var err error
		if n.watcher, err = watchFile(f.path); err != nil {
			f.noInotify = true // no inotify (EMFILE, ...): poll instead
		}
	}
	f.notice = n
	if n.watcher != nil {
		go f.watch(n)
	}
	// Whatever the old notice missed while they were switched, Read looks again.
	f.signal()
}

// endNotice stops the current notice. Its inotify instance, if any, is
// closed in the background: the teardown then overlaps whatever comes next
// (see Follower). Called with f.mu held.
func (f *Follower) endNotice() {
	n := f.notice
	if n == nil {
		return
	}
	f.notice = nil
	close(n.stop)
	if n.watcher != nil {
		go n.watcher.Close() // unblocks the watch goroutine's Read
	}
}

// Polling reports whether the follower polls the file now instead of being
// told of changes by inotify.
func (f *Follower) Polling() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.notice == nil || f.notice.watcher == nil
}

// ExpectExit says whether the writer is expected to exit soon (the CLI has
// printed its final result and runs nothing in the background). While it
// is, the follower polls, and the inotify instance is already being torn
// down when the writer exits; when it no longer is (the CLI works again),
// inotify watches once more, so a long silence costs nothing.
func (f *Follower) ExpectExit(soon bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.notice == nil || (f.notice.watcher == nil) == soon {
		return // closed, exited, or already in that mode
	}
	if f.noInotify && !soon {
		return
	}
	f.endNotice()
	f.startNotice(!soon)
}

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
			f.consumed.Add(int64(n))
			return n, nil
		}
		if err != nil && err != io.EOF {
			return 0, err
		}
		if f.draining {
			return 0, io.EOF
		}
		if err := f.wait(); err != nil {
			return 0, err
		}
	}
}

// wait blocks until the file may have grown (a notice, or a poll's time),
// the writer has exited, or Close: then it returns os.ErrClosed.
func (f *Follower) wait() error {
	var poll <-chan time.Time
	if f.Polling() {
		t := time.NewTimer(pollInterval)
		defer t.Stop()
		poll = t.C
	}
	select {
	case <-f.done:
		return os.ErrClosed
	case <-f.exited:
		// Whatever the writer wrote is in the file now: one more pass to
		// the end, and that end is final. No change matters any more: the
		// notice goes.
		f.draining = true
		f.mu.Lock()
		f.endNotice()
		f.mu.Unlock()
	case <-f.changed:
	case <-poll:
	}
	return nil
}

// Close stops following, unblocks a waiting Read and releases the file,
// the inotify instance and the goroutine that serves them. It does not
// wait for that goroutine, which touches nothing Close releases: its
// return can be held up by the instance's teardown (see Follower).
func (f *Follower) Close() error {
	f.closeOnce.Do(func() {
		close(f.done)
		f.mu.Lock()
		f.endNotice()
		f.mu.Unlock()
		f.closeErr = f.file.Close()
	})
	return f.closeErr
}

// watch turns inotify events into wake-ups. The inotify file is in the
// netpoller, so waiting on it holds no thread and closing it interrupts it.
func (f *Follower) watch(n *notice) {
	buf := make([]byte, 4096) // room for many events: a file watch has no names
	for {
		if _, err := n.watcher.Read(buf); err != nil {
			select {
			case <-n.stop:
				return // ended on purpose
			default:
			}
			// inotify broke down under us: keep the follower alive by polling.
			f.mu.Lock()
			if f.notice == n {
				f.noInotify = true
				f.endNotice()
				f.startNotice(false)
			}
			f.mu.Unlock()
			return
		}
		f.signal()
	}
}

func (f *Follower) signal() {
	select {
	case f.changed <- struct{}{}:
	default: // a wake-up is already pending; one is enough
	}
}
