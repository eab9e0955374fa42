// Package attempt decides, for one running CLI process, when it must be
// stopped and why. It is a pure machine, like internal/retry: Step folds one
// input (a stream line, the end of the stream, a timer, a request to stop)
// into the State at a given time and returns what the driver must do. It
// holds no clock, timer or process, so every decision is a row in a table
// test run in fake time, and a fuzz target checks its invariants.
//
// The driver (supervisor.runAttempt) owns the process, the one timer (set
// to State.Wake) and the side effects: events, logs, the journal.
package attempt
