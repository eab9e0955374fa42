package attempt

import "time"

// readCatchUp is how long a hang waits, once the stream is found to hold
// bytes written since malarun last looked, for the reader to catch up: the
// lines then push the deadline out themselves. A malarun stopped (Ctrl-Z,
// SIGSTOP, a paused VM) wakes with its timer late and the CLI's lines
// unread; without this the healthy tree would be killed (issue 31).
const readCatchUp = time.Second

// maxCatchUp bounds how far catch-ups can carry a hang past its deadline:
// a reader that falls behind a writer for longer is reading a flood, not a
// backlog (a paused malarun's backlog of a gigabyte is read in seconds).
const maxCatchUp = 30 * time.Second

// catchUp reports whether a hang due now waits for the reader instead, and
// if so moves the deadline readCatchUp from now. written is what the CLI
// has written; consumed what the reader has taken of it (0: unknown).
//
// The first catch-up after a line of progress needs only growth since
// malarun last looked (written > seen): lines may be on their way to the
// machine. Later ones need a reader that is behind (consumed < written)
// and has moved since the last catch-up, within maxCatchUp of the
// deadline. A line the CLI keeps writing without ending it, or pings each
// ending as the next begins, are read as they come: the reader is never
// behind them, so they are a hang one catch-up later, however they grow
// (docs/design.md §D34; a real CLI writes a line at once, even a 20 MB one).
func (l *liveness) catchUp(written, consumed int64, now time.Time) bool {
	grew := written > l.seen
	l.seen = max(l.seen, written)
	behind := consumed > 0 && consumed < written && consumed > l.consumedAt && now.Before(l.due.Add(maxCatchUp))
	if !(l.catchUps == 0 && grew || behind) {
		return false
	}
	l.catchUps++
	l.consumedAt, l.catchUpTo = consumed, written
	l.deadline = now.Add(readCatchUp)
	return true
}
