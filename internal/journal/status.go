package journal

import "github.com/malarun/malarun/internal/record"

// Word is the status as people read it, in `malarun status`,
// `show` and the summary: the record's status, or what the lock and the
// record say beyond it (damaged, poisoned, orphaned: processing with its
// malarun gone).
func (e Entry) Word() string {
	switch {
	case e.Err != nil:
		return "damaged"
	case e.Record.Poisoned:
		return "poisoned"
	case e.Record.Status == record.Processing && !e.Locked:
		return "orphaned" // its malarun died; the next run reclaims it
	}
	return string(e.Record.Status)
}

// Described is Word with the time a waiting run goes on: a usage limit's
// reset ("waiting until 2026-11-22 14:00 UTC"). Its malarun sleeps
// (locked) or exited 75; either way the session is continued at or after
// that time.
func (e Entry) Described() string {
	w := e.Word()
	if w == string(record.Waiting) && !e.Record.RetryAt.IsZero() {
		w += " until " + e.Record.RetryAt.UTC().Format("2006-01-02 15:04 UTC")
	}
	return w
}
