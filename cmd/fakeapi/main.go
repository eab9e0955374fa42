// Command fakeapi runs the fake Anthropic Messages API of internal/fakeapi
// for manual experiments with the real Claude Code CLI:
//
//	fakeapi -dump /tmp/reqs text:hello 'bash:echo hi' stall 'error:429'
//	fakeapi 'tool:Bash:{"command":"make test","run_in_background":true}' text:started
//	ANTHROPIC_BASE_URL=<printed URL> ANTHROPIC_API_KEY=dummy claude -p ...
//
// Steps, consumed in order by the CLI's conversation requests:
// text:REPLY, bash:COMMAND, tool:NAME:JSON (any tool call, the input a JSON
// object: a background Bash, a Monitor), stall, ptl (400 prompt too long),
// error:401, error:429, error:529, limit:SECONDS (a five-hour usage limit
// resetting in SECONDS; use CLAUDE_CODE_OAUTH_TOKEN, not an API key); prefix
// with N* to repeat (3*error:529, 0* = forever).
// It logs each request to stderr and, with -dump, writes each body to
// DIR/NNN.json. It runs until interrupted.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/malarun/malarun/internal/fakeapi"
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
	if err := fs.Parse(args); err != nil {
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

// parseStep reads one step of the command line, e.g. "2*error:529".
func parseStep(s string) (fakeapi.Step, error) {
	times := 1
	if n, rest, ok := strings.Cut(s, "*"); ok {
		v, err := strconv.Atoi(n)
		if err == nil {
			times, s = v, rest
		}
	}
	kind, arg, _ := strings.Cut(s, ":")
	var st fakeapi.Step
	switch kind {
	case "text":
		st = fakeapi.Text(arg)
	case "bash":
		st = fakeapi.Bash(arg)
	case "tool":
		name, input, ok := strings.Cut(arg, ":")
		if !ok || name == "" || !isJSONObject(input) {
			return fakeapi.Step{}, fmt.Errorf("step %q: want tool:NAME:{...JSON object...}", s)
		}
		st = fakeapi.ToolUse(name, json.RawMessage(input))
	case "stall":
		st = fakeapi.Stall()
	case "limit":
		secs, err := strconv.Atoi(arg)
		if err != nil {
			return fakeapi.Step{}, fmt.Errorf("limit:SECONDS wants the seconds until the reset, not %q", arg)
		}
		st = fakeapi.UsageLimited("five_hour", time.Now().Add(time.Duration(secs)*time.Second))
	case "ptl":
		st = fakeapi.PromptTooLong(210000, 200000)
	case "error":
		switch arg {
		case "401":
			st = fakeapi.AuthError()
		case "429":
			st = fakeapi.RateLimited(1)
		case "529":
			st = fakeapi.Overloaded()
		default:
			return fakeapi.Step{}, fmt.Errorf("unknown error step %q (401, 429 or 529)", arg)
		}
	default:
		return fakeapi.Step{}, fmt.Errorf("unknown step %q", s)
	}
	return fakeapi.Repeat(st, times), nil
}

// isJSONObject reports whether s is one valid JSON object, which is what
// fakeapi.ToolUse needs (it panics otherwise).
func isJSONObject(s string) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal([]byte(s), &m) == nil && m != nil
}
