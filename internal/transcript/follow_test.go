package transcript

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/stream"
)

// waitLimit only turns a hang into a failure; no test waits for it to pass.
const waitLimit = 10 * time.Second

type decoded struct {
	ev  stream.Event
	err error
}

// startDecoding decodes r in a goroutine, one event per receive, so the test
// can hand-shake: write a line, receive its event, write the next.
func startDecoding(r io.Reader) <-chan decoded {
	out := make(chan decoded)
	go func() {
		d := stream.NewDecoder(r)
		for {
			ev, err := d.Next()
			out <- decoded{ev, err}
			if err != nil {
				close(out)
				return
			}
		}
	}()
	return out
}

func receive(t *testing.T, ch <-chan decoded) decoded {
	t.Helper()
	select {
	case got, ok := <-ch:
		if !ok {
			t.Fatal("decoder stopped")
		}
		return got
	case <-time.After(waitLimit):
		t.Fatal("no event within the limit: the follower missed a change")
	}
	panic("unreachable")
}

func writeString(t *testing.T, w *os.File, s string) {
	t.Helper()
	if _, err := w.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func newFollowed(t *testing.T, poll bool) (*os.File, *Follower, chan struct{}) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "stdout.jsonl")
	w, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	exited := make(chan struct{})
	fl, err := follow(path, exited, poll)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fl.Close() })
	if fl.Polling() != poll {
		if !poll {
			t.Skip("inotify is not available here")
		}
		t.Fatalf("Polling() = %v, want %v", fl.Polling(), poll)
	}
	return w, fl, exited
}

func forEachMode(t *testing.T, test func(t *testing.T, poll bool)) {
	t.Run("inotify", func(t *testing.T) { test(t, false) })
	t.Run("polling", func(t *testing.T) { test(t, true) })
}

func TestFollowGrowingFile(t *testing.T) {
	forEachMode(t, func(t *testing.T, poll bool) {
		w, fl, exited := newFollowed(t, poll)
		events := startDecoding(fl)

		writeString(t, w, `{"type":"system","subtype":"init"}`+"\n")
		if got := receive(t, events); got.err != nil || got.ev.Subtype != "init" || got.ev.Line != 1 {
			t.Fatalf("line 1: %+v", got)
		}
		// A line that arrives in pieces is one event.
		writeString(t, w, `{"type":"assis`)
		writeString(t, w, `tant"}`+"\n\n")
		if got := receive(t, events); got.err != nil || got.ev.Type != "assistant" || got.ev.Line != 2 {
			t.Fatalf("line 2: %+v", got)
		}
		// Written before the exit, read after it: nothing is lost, and the
		// last line, without its newline, is still a complete object.
		writeString(t, w, `{"type":"user"}`+"\n"+`{"type":"result"}`)
		close(exited)
		for _, want := range []struct {
			typ  string
			line int64
		}{{"user", 4}, {"result", 5}} {
			if got := receive(t, events); got.err != nil || got.ev.Type != want.typ || got.ev.Line != want.line || got.ev.Kind != stream.KindJSON {
				t.Fatalf("want %s at line %d, got %+v", want.typ, want.line, got)
			}
		}
		if got := receive(t, events); got.err != io.EOF {
			t.Fatalf("after exit: %+v, want io.EOF", got)
		}
	})
}

func TestFollowCutShortAtExit(t *testing.T) {
	forEachMode(t, func(t *testing.T, poll bool) {
		w, fl, exited := newFollowed(t, poll)
		events := startDecoding(fl)
		writeString(t, w, `{"type":"assistant","message":{"content":[{"type":"text","text":"half`)
		close(exited)
		if got := receive(t, events); got.err != nil || got.ev.Kind != stream.KindCutShort || got.ev.Line != 1 {
			t.Fatalf("got %+v, want a cut-short line 1", got)
		}
		if got := receive(t, events); got.err != io.EOF {
			t.Fatalf("got %+v, want io.EOF", got)
		}
	})
}

func TestFollowCloseUnblocksRead(t *testing.T) {
	forEachMode(t, func(t *testing.T, poll bool) {
		_, fl, _ := newFollowed(t, poll)
		done := make(chan error, 1)
		go func() {
			_, err := fl.Read(make([]byte, 16))
			done <- err
		}()
		if err := fl.Close(); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			if !errors.Is(err, os.ErrClosed) {
				t.Errorf("Read after Close: %v, want os.ErrClosed", err)
			}
		case <-time.After(waitLimit):
			t.Fatal("Close did not unblock Read")
		}
		if _, err := fl.Read(make([]byte, 16)); !errors.Is(err, os.ErrClosed) {
			t.Errorf("Read on a closed follower: %v", err)
		}
		if err := fl.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

func TestFollowAlreadyExited(t *testing.T) {
	forEachMode(t, func(t *testing.T, poll bool) {
		w, fl, exited := newFollowed(t, poll)
		writeString(t, w, "{\"type\":\"a\"}\n{\"type\":\"b\"}\n")
		close(exited)
		data, err := io.ReadAll(fl)
		if err != nil || string(data) != "{\"type\":\"a\"}\n{\"type\":\"b\"}\n" {
			t.Fatalf("ReadAll: %q, %v", data, err)
		}
	})
}

func TestFollowMissingFile(t *testing.T) {
	if _, err := Follow(filepath.Join(t.TempDir(), "nope"), nil); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("got %v, want os.ErrNotExist", err)
	}
}

// TestFollowNoGoroutineLeak checks that Close ends the goroutine serving
// inotify or the poll ticker, including while a Read waits.
func TestFollowNoGoroutineLeak(t *testing.T) {
	forEachMode(t, func(t *testing.T, poll bool) {
		before := runtime.NumGoroutine()
		_, fl, _ := newFollowed(t, poll)
		done := make(chan error, 1)
		go func() {
			_, err := fl.Read(make([]byte, 16))
			done <- err
		}()
		fl.Close()
		<-done
		// Close has waited for its goroutine to finish its work; let it
		// (and the reader above) actually return.
		deadline := time.Now().Add(waitLimit)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				t.Fatalf("%d goroutines after Close, %d before Follow", runtime.NumGoroutine(), before)
			}
			runtime.Gosched()
		}
	})
}

// A writer expected to exit (its final result is in) is followed by
// polling, so that the inotify instance's teardown overlaps the writer's
// exit; if it goes on instead, inotify watches again. No line written
// around a switch is missed.
func TestFollowExpectExitPollsThenWatchesAgain(t *testing.T) {
	w, fl, exited := newFollowed(t, false)
	events := startDecoding(fl)
	line := func(n int64, typ string) {
		t.Helper()
		writeString(t, w, `{"type":"`+typ+`"}`+"\n")
		if got := receive(t, events); got.err != nil || got.ev.Type != typ || got.ev.Line != n {
			t.Fatalf("line %d: %+v", n, got)
		}
	}
	line(1, "result")
	fl.ExpectExit(true)
	if !fl.Polling() {
		t.Fatal("a follower expecting the exit still watches with inotify")
	}
	line(2, "system")
	fl.ExpectExit(false) // the CLI works again
	if fl.Polling() {
		t.Fatal("a follower whose writer goes on does not watch with inotify again")
	}
	line(3, "assistant")
	fl.ExpectExit(true)
	fl.ExpectExit(true) // idempotent
	writeString(t, w, `{"type":"result"}`+"\n")
	close(exited)
	if got := receive(t, events); got.err != nil || got.ev.Line != 4 {
		t.Fatalf("line 4: %+v", got)
	}
	if got := receive(t, events); got.err != io.EOF {
		t.Fatalf("after exit: %+v, want io.EOF", got)
	}
	fl.ExpectExit(false) // after the exit: nothing to watch
	if !fl.Polling() {
		t.Error("a follower of an exited writer watches again")
	}
}
