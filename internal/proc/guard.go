package proc

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A guard stands in for Linux's parent-death signal where the kernel has
// none (darwin): a small process, malarun itself re-executed as the hidden
// GuardCommand, started once per Spawner in its own process group. Its
// stdin is a pipe whose only write end malarun holds. Each tree started is
// announced on it ("watch"), and each tree seen gone is withdrawn ("done").
// When malarun dies, however it dies (kill -9 included), the kernel closes
// the write end: the guard reads EOF and ends every tree still watched:
// its group while the group is still the tree's, and the processes that
// carry the run's marker (setsid escapees re-parented to launchd too),
// started before the EOF or forked since by one it took (guard_end.go).
// When malarun exits normally, nothing is watched any more and the guard
// just exits. The next malarun of the run reclaims by the same marker
// whatever the guard could not end (the journal's reclaim).

// GuardCommand is the hidden subcommand that runs RunGuard: cmd/ wires it.
const GuardCommand = "__guard"

// guardGrace is the guard's SIGTERM grace. malarun's configured grace is
// not passed: once malarun is gone, quick matters more, and what the
// guard leaves the next invocation reclaims with the configured one.
const guardGrace = 3 * time.Second

// guardNote is one line on the guard's pipe.
type guardNote struct {
	Op     string `json:"op"` // "watch" or "done"
	Pgid   int    `json:"pgid"`
	Start  uint64 `json:"start,omitempty"` // the group leader's start time
	Marker string `json:"marker,omitempty"`
}

// RunGuard reads notes from r until EOF, then ends every tree still
// watched. It returns how many processes it found to end.
func RunGuard(r io.Reader) int {
	watched := readNotes(r)
	if len(watched) == 0 {
		return 0
	}
	// Only processes already running now, and what they fork, were
	// malarun's: a later malarun of the same run (same marker) may start
	// its CLI any moment from now.
	g := &guardEnd{watched: watched, cutoff: startTimeNow(), taken: map[int]uint64{}, marks: markMemo{}}
	return g.end(guardGrace)
}

// readNotes reads notes until EOF and returns the trees still watched.
// Lines it cannot act on (it only ever gets malarun's, but a pipe is
// outside input) are skipped: not JSON, no marker entry, no start time, or
// a group of 1 or less (kill(-1) signals every process, kill(0) the
// guard's own group).
func readNotes(r io.Reader) map[int]guardNote {
	watched := map[int]guardNote{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var n guardNote
		if json.Unmarshal(sc.Bytes(), &n) != nil || n.Pgid <= 1 {
			continue
		}
		switch {
		case n.Op == "watch" && strings.Contains(n.Marker, "=") && n.Start != 0:
			watched[n.Pgid] = n
		case n.Op == "done":
			delete(watched, n.Pgid)
		}
	}
	return watched
}

// guardLink is malarun's end of its guard.
type guardLink struct {
	pid int
	mu  sync.Mutex // one note at a time on the pipe
	w   *os.File
	enc *json.Encoder
}

// startGuard starts the guard, with s.mu held: the guard is malarun's
// child in a group of its own, which the reaper would otherwise take for
// an adopted orphan and reap, stealing the status its Wait needs.
func (s *Spawner) startGuard() (*guardLink, error) {
	if len(s.guardArgv) == 0 {
		return nil, errors.New("no guard command")
	}
	r, w, err := os.Pipe() // close-on-exec: no CLI inherits the write end
	if err != nil {
		return nil, err
	}
	defer r.Close()
	cmd := exec.Command(s.guardArgv[0], s.guardArgv[1:]...)
	cmd.Stdin = r
	// Its own group: a Ctrl-C to malarun's group must not end the guard
	// before malarun has stopped its tree.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, err
	}
	g := &guardLink{pid: cmd.Process.Pid, w: w, enc: json.NewEncoder(w)}
	go func() { _ = cmd.Wait() }()
	return g, nil
}

// guardWriteLimit bounds a note's write: a guard that is stopped (SIGSTOP)
// with its pipe full must not hold up malarun.
const guardWriteLimit = 100 * time.Millisecond

// tell sends the guard a note; a guard that died or is stuck costs only
// its service (malarun's next invocation still reclaims by marker).
func (g *guardLink) tell(n guardNote) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	_ = g.w.SetWriteDeadline(time.Now().Add(guardWriteLimit))
	_ = g.enc.Encode(n)
}
