// Package run decides a run's next step, in one pure place. Given how the
// invocation begins (Begin), how an attempt ended (Next) or that a wait is
// over (Woke), the run's State and the time, it returns the new State and
// the one Action the driver carries out: start an attempt (which session,
// resumed or new, which prompt with what data, after what wait), sleep
// until a time (a backoff, a usage limit's reset), or end the run with an
// outcome.
//
// It holds no clock, process, file or random source: the driver passes the
// time and Draws (a fresh session id, a jitter value), so every path of a
// run is a row in a table test. Resumes, fresh starts, checkpoints,
// continuations, fallbacks, usage-limit waits and every end are its
// decisions; nothing outside it changes a State. internal/attempt decides
// within one attempt (when to stop it, how it ended); internal/supervisor
// only carries the Actions out (docs/design.md §D4, §D5, §D10, §D23).
package run
