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
	follow := fs.Bool("follow-prompt", false, "once the steps are used up, answer as the fake model that runs the prompt's shell blocks (see above)")
	stallOnce := fs.Int("stall-once", -1, "with -follow-prompt, stall mid-answer once, after this many tool calls (-1: never)")
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

	opts := []fakeapi.Option{fakeapi.WithScript(steps...), fakeapi.WithLogf(func(format string, a ...any) {
		fmt.Fprintf(stderr, format+"\n", a...)
	})}
	switch {
	case *follow && *stallOnce >= 0:
		opts = append(opts, fakeapi.WithThen(fakeapi.StallOnce(*stallOnce, fakeapi.FollowPrompt)))
	case *follow:
		opts = append(opts, fakeapi.WithThen(fakeapi.FollowPrompt))
	case *stallOnce >= 0:
		fmt.Fprintln(stderr, "fakeapi: -stall-once needs -follow-prompt")
		return 2
	}
	srv := fakeapi.New(opts...)
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
