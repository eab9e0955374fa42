package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/malarun/malarun/internal/testing/testchild"
	"github.com/malarun/malarun/internal/ui"
)

// hostile is text a model could write, with everything a terminal acts on:
// a window title (OSC 0 ... BEL), a screen erase, a raw 8-bit CSI byte, a
// C1 CSI, an OSC 8 hyperlink, bidirectional overrides and isolates, a line
// separator, a lone CR and invalid UTF-8.
const hostile = "x\x1b]0;title\x07\x1b[2J\x9b2J\u009b2J" +
	"\x1b]8;;https://evil.example/\x1b\\link\x1b]8;;\x1b\\" +
	"\u202eevil\u202c\u2066iso\u2069\u2028over\rwrite\xff\xfe"

// shown is what must still be seen of hostile once it is made inert.
const shown = "x^[]0;title^G^[[2J"

// sgr matches the colour sequences malarun's console logs use.
var sgr = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// rawIn returns what in out a terminal would act on: C0 controls but for
// '\n' and '\t', DEL, C1 controls, bidirectional controls, U+2028/U+2029
// and invalid UTF-8. The definition is spelled out here, not taken from
// internal/ui.
func rawIn(out string) []string {
	var found []string
	for i := 0; i < len(out); {
		r, size := utf8.DecodeRuneInString(out[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			found = append(found, fmt.Sprintf("invalid UTF-8 %#x", out[i]))
		case r < 0x20 && r != '\n' && r != '\t', r == 0x7f, r >= 0x80 && r <= 0x9f,
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x2028, r == 0x2029:
			found = append(found, string(r))
		}
		i += size
	}
	return found
}

// hostileResult is a transcript whose result text is hostile; isError
// makes it an error result, whose reason quotes it.
func hostileResult(t *testing.T, isError bool) string {
	res, err := json.Marshal(map[string]any{"type": "result", "subtype": "success", "is_error": isError, "result": hostile,
		"session_id": testchild.SessionID, "total_cost_usd": 0.01})
	if err != nil {
		t.Fatal(err)
	}
	return writeTranscript(t, testchild.InitLine, testchild.TextLine, string(res))
}

// hostileDecoded is the result text as claude's JSON line carries it:
// each byte of invalid UTF-8 is U+FFFD.
func hostileDecoded(t *testing.T) string {
	b, _ := json.Marshal(hostile)
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// The final error line quotes an error result; it reaches stderr inert
// whether stderr is a pipe, a terminal or a GitHub Actions log.
func TestErrorLineIsInert(t *testing.T) {
	t.Parallel()
	wantLine := func(t *testing.T, out string) {
		t.Helper()
		for line := range strings.Lines(out) {
			if strings.HasPrefix(line, "malarun: claude finished with an error") && strings.Contains(line, shown) {
				return
			}
		}
		t.Errorf("no inert error line with %q:\n%q", shown, out)
	}
	t.Run("pipe", func(t *testing.T) {
		t.Parallel()
		p := newProc(t, "issue-inert", testchild.Replay, []string{testchild.EnvTranscript + "=" + hostileResult(t, true)})
		if code := p.run(); code != 1 {
			t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
		}
		// The JSON logs quote the reason too: nothing raw anywhere.
		if raw := rawIn(p.stderr.String()); len(raw) > 0 {
			t.Errorf("stderr has %q raw:\n%q", raw, p.stderr.String())
		}
		wantLine(t, p.stderr.String())
	})
	t.Run("GitHub Actions", func(t *testing.T) {
		t.Parallel()
		summary := filepath.Join(t.TempDir(), "summary.md")
		p := newProc(t, "issue-inert", testchild.Replay, append(githubEnv(t, summary), testchild.EnvTranscript+"="+hostileResult(t, true)))
		if code := p.run(); code != 1 {
			t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
		}
		stderr := p.stderr.String()
		if raw := rawIn(stderr); len(raw) > 0 {
			t.Errorf("stderr has %q raw:\n%q", raw, stderr)
		}
		wantLine(t, stderr)
		cmds := workflowCommands(stderr)
		if len(cmds) != 3 || !strings.HasPrefix(cmds[2], "::error title=") || !strings.Contains(cmds[2], shown) {
			t.Errorf("the annotation: %q", cmds)
		}
		b, _ := os.ReadFile(summary)
		if raw := rawIn(string(b)); len(raw) > 0 || !strings.Contains(string(b), shown) {
			t.Errorf("the step summary has %q raw:\n%s", raw, b)
		}
	})
	t.Run("terminal", func(t *testing.T) {
		t.Parallel()
		p := newProc(t, "issue-inert", testchild.Replay, []string{testchild.EnvTranscript + "=" + hostileResult(t, true)})
		r := startTTY(t, p)
		if code := r.wait(); code != 1 {
			t.Fatalf("exit %d; screen:\n%s", code, r.screen)
		}
		r.checkClean("issue-inert · ")
		// The error line wraps on the terminal: it is the screen's end.
		lines := r.screen.Lines()
		if end := strings.Join(lines[len(lines)-2:], ""); !strings.HasPrefix(end, "malarun: claude finished with an error: error result: "+shown) {
			t.Errorf("the screen ends with %q, want the inert error; screen:\n%s", end, r.screen)
		}
	})
	t.Run("terminal, quiet", func(t *testing.T) {
		t.Parallel()
		p := newProc(t, "issue-inert", testchild.Replay, []string{testchild.EnvTranscript + "=" + hostileResult(t, true)}, "--quiet")
		r := startTTY(t, p)
		if code := r.wait(); code != 1 {
			t.Fatalf("exit %d; screen:\n%s", code, r.screen)
		}
		// The terminal turns "\n" into "\r\n"; every other CR came from the text.
		out := strings.ReplaceAll(sgr.ReplaceAllString(r.raw.String(), ""), "\r\n", "\n")
		if raw := rawIn(out); len(raw) > 0 {
			t.Errorf("the terminal got %q raw:\n%q", raw, out)
		}
		wantLine(t, out)
	})
}

// The result text is inert on a terminal, and byte for byte what claude
// wrote in a file or a pipe.
func TestResultIsInertOnATerminalOnly(t *testing.T) {
	t.Parallel()
	want := hostileDecoded(t) + "\n"
	t.Run("terminal", func(t *testing.T) {
		t.Parallel()
		p := newProc(t, "issue-inert", testchild.Replay, []string{testchild.EnvTranscript + "=" + hostileResult(t, false)}, "--quiet")
		r := startTTY(t, p)
		if code := r.wait(); code != 0 {
			t.Fatalf("exit %d; screen:\n%s", code, r.screen)
		}
		if got, want := r.raw.String(), strings.ReplaceAll(ui.Inert(want), "\n", "\r\n"); got != want {
			t.Errorf("the terminal got\n%q\nwant\n%q", got, want)
		}
		if raw := rawIn(strings.ReplaceAll(r.raw.String(), "\r\n", "\n")); len(raw) > 0 || !strings.Contains(r.raw.String(), shown) {
			t.Errorf("the terminal got %q raw:\n%q", raw, r.raw.String())
		}
		if errs := r.screen.Errors(); len(errs) > 0 {
			t.Errorf("output a terminal cannot show cleanly: %q", errs)
		}
	})
	t.Run("terminal, --json", func(t *testing.T) {
		t.Parallel()
		p := newProc(t, "issue-inert", testchild.Replay, []string{testchild.EnvTranscript + "=" + hostileResult(t, false)}, "--quiet", "--json")
		r := startTTY(t, p)
		if code := r.wait(); code != 0 {
			t.Fatalf("exit %d; screen:\n%s", code, r.screen)
		}
		out := strings.ReplaceAll(r.raw.String(), "\r\n", "\n")
		if raw := rawIn(out); len(raw) > 0 {
			t.Errorf("the report puts %q raw on the terminal:\n%q", raw, out)
		}
		var rep struct{ Result string }
		if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Result+"\n" != want {
			t.Errorf("the report decodes to %q (%v), want the result as claude wrote it", rep.Result, err)
		}
	})
	t.Run("terminal, with the status line", func(t *testing.T) {
		t.Parallel()
		p := newProc(t, "issue-inert", testchild.Replay, []string{testchild.EnvTranscript + "=" + hostileResult(t, false)})
		r := startTTY(t, p)
		if code := r.wait(); code != 0 {
			t.Fatalf("exit %d; screen:\n%s", code, r.screen)
		}
		r.checkClean("issue-inert · ")
		if lines := r.screen.Lines(); !strings.HasPrefix(lines[len(lines)-1], shown) {
			t.Errorf("the result is not the last line; screen:\n%s", r.screen)
		}
	})
	t.Run("file", func(t *testing.T) {
		t.Parallel()
		p := newProc(t, "issue-inert", testchild.Replay, []string{testchild.EnvTranscript + "=" + hostileResult(t, false)})
		out, err := os.Create(filepath.Join(t.TempDir(), "result.txt"))
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		p.cmd.Stdout, p.cmd.Stderr = out, &p.stderr
		if code := exitCode(t, p.cmd.Run()); code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
		}
		if got, _ := os.ReadFile(out.Name()); string(got) != want {
			t.Errorf("the file holds\n%q\nwant\n%q", got, want)
		}
	})
	t.Run("pipe", func(t *testing.T) {
		t.Parallel()
		p := newProc(t, "issue-inert", testchild.Replay, []string{testchild.EnvTranscript + "=" + hostileResult(t, false)})
		if code := p.run(); code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
		}
		if got := p.stdout.String(); got != want {
			t.Errorf("the pipe got\n%q\nwant\n%q", got, want)
		}
	})
}

// A planted or damaged record.json cannot drive the terminal through
// `malarun status`: every field of the table and of the detail view is
// cleaned. (--json is JSON-escaped.)
func TestStatusIsInert(t *testing.T) {
	c := newCLI(t)
	stateDir := t.TempDir()
	// A record malarun could have written: hostile text only where it
	// allows free text (a reason, a limit type, a path of the user's).
	const run, session = "20260102T030405Z-3f9a1c", "5fcbbccf-06da-4fd6-8405-d704e7fbd2c7"
	cwd := "/" + strings.ReplaceAll(hostile, "/", "_")
	rec := map[string]any{
		"version": 3, "issue": "issue-planted", "status": "waiting", "cwd": cwd, "home": "/" + hostile,
		"run_id": run, "run_dir": filepath.Join(stateDir, "issue-planted", "runs", run), "runs": []string{run},
		"sessions": []string{session}, "session_id": session, "session_talked": true, "attempts": 2, "reclaims": 1,
		"continuations": 0, "checkpoint": hostile, "cost_usd": 0.5, "total_cost_usd": 1.5,
		"owner":  map[string]any{"pid": 1, "host": "box", "started_at": "2026-01-02T03:04:05Z"},
		"marker": "issue-planted/" + run, "exit_code": 75, "reason": hostile, "limit_type": hostile,
		"updated_at": "2026-01-02T03:04:05Z", "started_at": "2026-01-02T03:04:05Z",
	}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	// One that is not: hostile ids, host and run folder make it damaged,
	// and its damage is shown as inertly.
	for _, k := range []string{"run_id", "run_dir", "session_id", "marker"} {
		rec[k] = hostile
	}
	rec["sessions"], rec["owner"] = []string{hostile}, map[string]any{"pid": 1, "host": hostile}
	damaged, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	for dir, content := range map[string][]byte{
		"issue-planted":  b,
		"issue-damaged2": bytes.ReplaceAll(damaged, []byte(`"issue-planted"`), []byte(`"issue-damaged2"`)),
		// A damaged record in a folder whose name is hostile itself.
		"issue-\x1b]0;title\x07\u202e": []byte("{\"version\":2,\"reason\":\"\x1b[2J\"\x9b"),
	} {
		if err := os.MkdirAll(filepath.Join(stateDir, dir), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(stateDir, dir, "record.json"), content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"status"}, {"status", "issue-planted"}, {"status", "issue-damaged2"}} {
		o := c.run(append(args, "--state-dir", stateDir)...)
		if o.code != 0 {
			t.Fatalf("%q: exit %d; stderr:\n%s", args, o.code, o.stderr)
		}
		if raw := rawIn(o.stdout); len(raw) > 0 {
			t.Errorf("%q prints %q raw:\n%q", args, raw, o.stdout)
		}
		if strings.Contains(o.stdout, "\t") {
			t.Errorf("%q:\n%s", args, o.stdout)
		}
	}
	o := c.run("status", "issue-planted", "--state-dir", stateDir)
	for _, field := range []string{"reason:", "limit type:", "cwd:"} {
		if !regexp.MustCompile(`(?m)^` + field + ` +.*x \]0;title \[2J`).MatchString(o.stdout) {
			t.Errorf("no cleaned %s line:\n%s", field, o.stdout)
		}
	}
	if n := strings.Count(o.stdout, "\n"); n != 18 {
		t.Errorf("%d lines, want one per field (18 for a waiting run):\n%s", n, o.stdout)
	}
	if o := c.run("status", "issue-damaged2", "--state-dir", stateDir); !strings.Contains(o.stdout, "is damaged") {
		t.Errorf("the record with hostile ids is not damaged:\n%s", o.stdout)
	}
}
