package main

import (
	"context"

	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/supervisor"
)

// interruptible runs op, which may block for ever (opening or reading a
// FIFO, /dev/stdin, a process substitution), on a goroutine, and returns
// its value and error. A shutdown signal or the end of ctx first ends the
// wait instead: stopped is then the error that ends malarun (an
// interruption, "while <what>; nothing was started"), and op is left to
// finish on its own; abandon, if not nil, gets what it returns then (to
// close a file it opened late).
func interruptible[T any](ctx context.Context, d *deps, what string, op func() (T, error), abandon func(T)) (v T, err, stopped error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := op()
		done <- result{v, err}
	}()
	leave := func() {
		if abandon != nil {
			go func() { abandon((<-done).v) }()
		}
	}
	select {
	case r := <-done:
		return r.v, r.err, nil
	case sig := <-d.signals:
		leave()
		return v, nil, &supervisor.RunError{Kind: outcome.Interrupted, Signal: sig, Detail: "while " + what + "; nothing was started"}
	case <-ctx.Done():
		leave()
		return v, nil, ctx.Err()
	}
}
