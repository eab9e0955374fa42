package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/malarun/malarun/internal/environ"
)

// errPagerQuit: the pager ended before the text did (the reader quit it).
var errPagerQuit = errors.New("the pager quit")

// pagerCommand is the pager to run, as git picks one: $MALARUN_PAGER, then
// $PAGER, then less. A variable set to "" or "cat" means none.
func pagerCommand(env []string) string {
	for _, name := range []string{"MALARUN_PAGER", "PAGER"} {
		if v, ok := environ.Lookup(env, name); ok {
			return strings.TrimSpace(v)
		}
	}
	return "less"
}

// startPager runs the pager with malarun's stdout as its own and returns
// where to write the text and how to wait for the pager. The command is
// the user's own setting, run by the shell as git runs it. Without a pager
// (none set, or it cannot start) the text goes to stdout.
func startPager(d *deps) (io.Writer, func() error) {
	cmdline := pagerCommand(d.environ())
	if cmdline == "" || cmdline == "cat" {
		return d.stdout, func() error { return nil }
	}
	out, ok := d.stdout.(*os.File)
	if !ok {
		return d.stdout, func() error { return nil }
	}
	cmd := exec.Command("/bin/sh", "-c", cmdline)
	cmd.Stdout, cmd.Stderr = out, os.Stderr
	cmd.Env = d.environ()
	if d.getenv("LESS") == "" {
		// Quit at once when the text fits, keep the colours, leave it on the screen.
		cmd.Env = append(cmd.Env, "LESS=FRX")
	}
	pipe, err := cmd.StdinPipe()
	if err != nil {
		return d.stdout, func() error { return nil }
	}
	if err := cmd.Start(); err != nil {
		return d.stdout, func() error { return nil }
	}
	w := &pagerWriter{w: pipe}
	return w, func() error {
		pipe.Close()
		cmd.Wait() // the pager's exit status is the reader's business
		if w.quit {
			return errPagerQuit
		}
		return nil
	}
}

// pagerWriter turns the pager's going away into errPagerQuit.
type pagerWriter struct {
	w    io.Writer
	quit bool
}

func (p *pagerWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) {
		p.quit = true
		return n, errPagerQuit
	}
	return n, err
}
