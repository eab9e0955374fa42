// Package headless drives Debian's chromium over the Chrome DevTools
// Protocol, for tests that must prove what a real browser does with a page
// malarun writes (malarun show --format html): it renders without console
// errors or network requests, a planted script does not run, its own
// clicks work. The protocol runs over a pipe (--remote-debugging-pipe:
// JSON messages ending in a NUL byte, the browser reading fd 3 and writing
// fd 4), so no port is opened and no websocket library is needed. Test
// support only, like internal/testing/testchild.
package headless

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	// Builds only for the kernels malarun supports, with one clear error elsewhere.
	_ "github.com/malarun/malarun/internal/platform"
)

// Find is the browser to run: $MALARUN_CHROMIUM, else chromium or
// chromium-browser on PATH.
func Find() (string, error) {
	if p := os.Getenv("MALARUN_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no chromium on PATH (apt-get install chromium; .ci/run does)")
}

// Require is Find for a test: without a browser the test skips, loudly,
// and fails with CI=true, where a missing dependency is a failure.
func Require(t testing.TB) string {
	t.Helper()
	p, err := Find()
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("headless browser: %v; CI=true, so this is a failure", err)
	}
	t.Skipf("!!! SKIPPING: %v !!!", err)
	return ""
}

// Browser is one headless chromium with a fresh profile.
type Browser struct {
	cmd  *exec.Cmd
	to   *os.File // the browser's fd 3
	from *bufio.Reader
	dir  string

	mu      sync.Mutex
	nextID  int
	waiting map[int]chan reply
	events  []Event
	changed chan struct{} // closed and replaced at each event
	dead    error         // set when the pipe closed: every call fails
}

// Event is a protocol event: its method, session and parameters.
type Event struct {
	Method    string          `json:"method"`
	SessionID string          `json:"sessionId"`
	Params    json.RawMessage `json:"params"`
}

type reply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// Start runs the browser at path. Close ends it and its whole process group.
func Start(path string) (*Browser, error) {
	dir, err := os.MkdirTemp("", "malarun-chromium-")
	if err != nil {
		return nil, err
	}
	// fd 3: what the browser reads; fd 4: what it writes.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, "--headless", "--remote-debugging-pipe", "--user-data-dir="+dir,
		// Root cannot use the sandbox; the page is the test's own.
		"--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
		"--disable-extensions", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--disable-default-apps", "--mute-audio", "--hide-scrollbars", "about:blank")
	cmd.ExtraFiles = []*os.File{inR, outW}
	cmd.SysProcAttr = browserAttr()
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	inR.Close()
	outW.Close()
	b := &Browser{cmd: cmd, to: inW, from: bufio.NewReaderSize(outR, 1<<20), dir: dir,
		waiting: map[int]chan reply{}, changed: make(chan struct{})}
	go b.read(outR)
	return b, nil
}

// read dispatches the browser's messages until the pipe closes.
func (b *Browser) read(f *os.File) {
	defer f.Close()
	for {
		msg, err := b.from.ReadBytes(0)
		if err != nil {
			b.mu.Lock()
			b.dead = fmt.Errorf("headless: the browser's pipe closed: %w", err)
			for id, c := range b.waiting {
				close(c)
				delete(b.waiting, id)
			}
			close(b.changed)
			b.changed = nil
			b.mu.Unlock()
			return
		}
		var m struct {
			ID int `json:"id"`
			reply
			Event
		}
		if json.Unmarshal(msg[:len(msg)-1], &m) != nil {
			continue
		}
		b.mu.Lock()
		if m.ID != 0 {
			if c, ok := b.waiting[m.ID]; ok {
				c <- m.reply
				delete(b.waiting, m.ID)
			}
		} else if m.Method != "" {
			b.events = append(b.events, m.Event)
			close(b.changed)
			b.changed = make(chan struct{})
		}
		b.mu.Unlock()
	}
}

// Call sends a command (to a page's session, or the browser's with "")
// and decodes its result into out (nil: ignored).
func (b *Browser) Call(ctx context.Context, session, method string, params, out any) error {
	b.mu.Lock()
	if b.dead != nil {
		b.mu.Unlock()
		return b.dead
	}
	b.nextID++
	id := b.nextID
	c := make(chan reply, 1)
	b.waiting[id] = c
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	data, _ := json.Marshal(msg)
	_, err := b.to.Write(append(data, 0))
	b.mu.Unlock()
	if err != nil {
		return err
	}
	select {
	case r, ok := <-c:
		if !ok {
			return b.dead
		}
		if r.Error != nil {
			return fmt.Errorf("%s: %s", method, r.Error.Message)
		}
		if out != nil {
			return json.Unmarshal(r.Result, out)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// WaitEvent waits until an event matches, looking at every event since
// the browser started, from the from-th on; it returns the match and the
// index after it.
func (b *Browser) WaitEvent(ctx context.Context, from int, match func(Event) bool) (Event, int, error) {
	for {
		b.mu.Lock()
		for i := from; i < len(b.events); i++ {
			if match(b.events[i]) {
				e := b.events[i]
				b.mu.Unlock()
				return e, i + 1, nil
			}
		}
		from = len(b.events)
		changed, dead := b.changed, b.dead
		b.mu.Unlock()
		if dead != nil {
			return Event{}, from, dead
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return Event{}, from, ctx.Err()
		}
	}
}

// Events is every event so far.
func (b *Browser) Events() []Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Event(nil), b.events...)
}

// Close ends the browser and every process of its group, and removes its profile.
func (b *Browser) Close() error {
	b.to.Close() // the browser exits when its pipe closes
	syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
	b.cmd.Wait()
	return os.RemoveAll(b.dir)
}

// OpenFor is what a test of a page needs: a browser (Require: skipped
// loudly, or failed in CI, without one), the page at url opened and
// loaded, and a context bounded by timeout for the calls that follow. The
// browser is closed when the test ends.
func OpenFor(t testing.TB, url string, timeout time.Duration) (context.Context, *Page) {
	t.Helper()
	path := Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	b, err := Start(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	p, err := b.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	return ctx, p
}
