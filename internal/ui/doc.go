// Package ui is what a person or a program sees of a run: the live status
// line and event lines on a terminal, the --events JSON lines, the --json
// report, and the GitHub Actions workflow commands and step summary.
//
// Everything here is fed by supervisor events and the supervisor's Report.
// The supervisor calls its observer on its own goroutine, so the sinks that
// do I/O (the terminal, the events file) take events through a queue, which
// never blocks the producer and coalesces the frequent progress events.
package ui
