// Command fakeapi runs the fake Anthropic Messages API of internal/testing/fakeapi
// for manual experiments with the real Claude Code CLI; `fakeapi -h`
// prints the step grammar (usage below).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/malarun/malarun/internal/testing/fakeapi"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fakeapi", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dump := fs.String("dump", "", "write each request body to `dir`/NNN.json")
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	var steps []fakeapi.Step
	for _, a := range fs.Args() {
		st, err := parseStep(a)
		if err != nil {
			fmt.Fprintln(stderr, "fakeapi:", err)
			return 2
		}
		steps = append(steps, st)
	}
	if *dump != "" {
		if err := os.MkdirAll(*dump, 0o755); err != nil {
			fmt.Fprintln(stderr, "fakeapi:", err)
			return 1
		}
	}

	srv := fakeapi.New(fakeapi.WithScript(steps...), fakeapi.WithLogf(func(format string, a ...any) {
		fmt.Fprintf(stderr, format+"\n", a...)
	}))
	defer srv.Close()
	fmt.Fprintln(stdout, srv.URL())

	written := 0
	for {
		reqs, err := srv.WaitRequests(ctx, written+1)
		if err != nil {
			return 0 // interrupted
		}
		for _, r := range reqs[written:] {
			if *dump != "" && len(r.Body) > 0 {
				name := filepath.Join(*dump, fmt.Sprintf("%03d.json", r.Seq))
				if err := os.WriteFile(name, r.Body, 0o644); err != nil {
					fmt.Fprintln(stderr, "fakeapi:", err)
				}
			}
		}
		written = len(reqs)
	}
}
