// Command testprogress runs go test -json and shows what a person needs of
// it while it runs (make test): each package's verdict with its counts as
// it ends, a line per top-level test of the packages -each names (the
// end-to-end suite, whose package takes most of the time) as each ends, a
// failed test's output, a line naming what still runs when nothing was
// printed for -every, and at the end one line: passed, failed, skipped,
// each skip named with its reason. Its exit status is go test's. With
// -tally FILE it also appends the run's account to FILE; -account FILE
// prints the one line of every run in FILE (make test runs go test three
// times). The standard library only; test support, like the rest of
// internal/testing.
//
//	testprogress -label 'claude 2.1.332' -tally T -- go test -json -race ./...
//	testprogress -account T
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"syscall"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("testprogress", flag.ContinueOnError)
	fs.SetOutput(stderr)
	label := fs.String("label", "", "what this run is, for the closing line (e.g. the CLI it ran against)")
	tallyFile := fs.String("tally", "", "append this run's account to `FILE`")
	account := fs.String("account", "", "print the one-line account of the runs in `FILE`, and nothing else")
	each := fs.String("each", `/e2e$`, "a `regexp` of the packages whose every top-level test gets a line as it ends")
	every := fs.Duration("every", 50*time.Second, "the longest silence before a line naming what still runs")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *account != "" {
		f, err := os.Open(*account)
		if err != nil {
			fmt.Fprintln(stderr, "testprogress:", err)
			return 1
		}
		defer f.Close()
		runs, err := readTally(f)
		if err != nil {
			fmt.Fprintln(stderr, "testprogress:", err)
			return 1
		}
		fmt.Fprintln(stdout, "tests: "+line(runs))
		return 0
	}
	eachRe, err := regexp.Compile(*each)
	if err != nil || fs.NArg() == 0 || *every <= 0 {
		fmt.Fprintln(stderr, "usage: testprogress [-label L] [-tally FILE] [-each REGEXP] [-every D] -- go test -json ...")
		return 2
	}
	code, p, err := follow(fs.Args(), eachRe, *every, stdout, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "testprogress:", err)
		return 1
	}
	t := p.tally(*label, time.Now())
	prefix := "tests"
	if *label != "" {
		prefix = *label
	}
	fmt.Fprintf(stdout, "== %s: %s\n", prefix, line([]tally{{Passed: t.Passed, Failed: t.Failed, Skips: t.Skips, Elapsed: t.Elapsed, Failing: t.Failing}}))
	if *tallyFile != "" {
		if err := appendTally(*tallyFile, t); err != nil {
			fmt.Fprintln(stderr, "testprogress:", err)
			return max(code, 1)
		}
	}
	return code
}

// follow runs argv (go test -json ...), its stderr to stderr and its
// events through a progress to stdout, until it exits; code is its exit
// status (128+N for a signal N). An interrupt from the terminal reaches
// go test, which ends the tests: this waits for it, reading on; a SIGTERM
// for this process alone is passed on to go test.
func follow(argv []string, each *regexp.Regexp, every time.Duration, stdout, stderr io.Writer) (int, *progress, error) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)

	cmd := exec.CommandContext(context.Background(), argv[0], argv[1:]...)
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, nil, err
	}
	if err := cmd.Start(); err != nil {
		return 0, nil, err
	}
	lines := make(chan []byte)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
	}()

	p := newProgress(each, every, time.Now())
	w := bufio.NewWriter(stdout)
	print := func(ls []string) {
		for _, l := range ls {
			fmt.Fprintln(w, l)
		}
		w.Flush()
	}
	ticker := time.NewTicker(min(every/5, 10*time.Second))
	defer ticker.Stop()
	for done := false; !done; {
		select {
		case b, ok := <-lines:
			if !ok {
				done = true
				break
			}
			var e event
			if json.Unmarshal(b, &e) != nil || e.Action == "" {
				print([]string{string(b)}) // not an event: as it came
				continue
			}
			print(p.event(e, time.Now()))
		case now := <-ticker.C:
			print(p.tick(now))
		case sig := <-sigs:
			if sig == syscall.SIGTERM {
				_ = cmd.Process.Signal(sig)
			}
		}
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, p, nil
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), p, nil
		}
		return exit.ExitCode(), p, nil
	}
	return 0, p, err
}
