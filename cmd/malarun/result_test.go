package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/malarun/malarun/internal/event"

	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/testing/testchild"
)

const copiedLog = `"message":"result copied from the transcript"`

// bigResultText is what testchild.BigResult's result decodes to.
func bigResultText(t *testing.T, size int) string {
	t.Helper()
	var b strings.Builder
	if err := testchild.BigResultText(&b, size); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// noTroubleLogged fails on an error or warning in the JSON logs.
func noTroubleLogged(t *testing.T, stderr string) {
	t.Helper()
	for line := range strings.Lines(stderr) {
		if strings.Contains(line, `"level":"error"`) || strings.Contains(line, `"level":"warn"`) {
			t.Errorf("log: %s", line)
		}
	}
}

// A result longer than the decoder keeps reaches stdout and the report
// whole, copied from the transcript: plain, under GitHub Actions (inside
// one stop-commands section, "##[" defused in the report), and into a file.
func TestBigResultIsWhole(t *testing.T) {
	t.Parallel()
	const size = 3 * stream.MaxResultBytes / 2
	want := bigResultText(t, size)
	env := func(t *testing.T, actions bool) []string {
		e := []string{testchild.EnvSize + "=" + strconv.Itoa(size)}
		if actions {
			e = append(e, githubEnv(t, filepath.Join(t.TempDir(), "summary.md"))...)
		}
		return e
	}
	stopSection := regexp.MustCompile(`^::stop-commands::([0-9a-f]{32})\n((?s).*)::([0-9a-f]{32})::\n$`)
	tests := []struct {
		name    string
		actions bool
		args    []string
		check   func(t *testing.T, stdout string)
	}{
		{"text", false, nil, func(t *testing.T, stdout string) {
			if stdout != want+"\n" {
				t.Errorf("stdout: %d bytes, want the %d of the text and a newline", len(stdout), len(want))
			}
		}},
		{"json", false, []string{"--json"}, func(t *testing.T, stdout string) {
			if r := checkReport(t, stdout); r.Result != want || r.ResultTruncated || strings.Contains(stdout, "result_truncated") {
				t.Errorf("report: result of %d bytes (truncated %v), want %d", len(r.Result), r.ResultTruncated, len(want))
			}
		}},
		{"text under GitHub Actions", true, nil, func(t *testing.T, stdout string) {
			m := stopSection.FindStringSubmatch(stdout)
			if m == nil || m[1] != m[3] || m[2] != want+"\n" {
				t.Errorf("stdout is not the text in one stop-commands section: %.200q", stdout)
			}
		}},
		{"json under GitHub Actions", true, []string{"--json"}, func(t *testing.T, stdout string) {
			if strings.Contains(stdout, "##[") || strings.Contains(stdout, "::stop-commands::") {
				t.Errorf("the report is wrapped or not defused")
			}
			if r := checkReport(t, stdout); r.Result != want {
				t.Errorf("report: result of %d bytes, want %d", len(r.Result), len(want))
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := newProc(t, "issue-big", testchild.BigResult, env(t, tt.actions), append([]string{"--log-format", "json"}, tt.args...)...)
			if code := p.run(); code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
			}
			stdout := p.stdout.String()
			tt.check(t, stdout)
			if cmds := workflowCommands(stdout); tt.actions && len(cmds) != 0 {
				t.Errorf("stdout would run %d workflow commands, the first %.200q", len(cmds), cmds[0])
			}
			noTroubleLogged(t, p.stderr.String())
			if !strings.Contains(p.stderr.String(), copiedLog) {
				t.Errorf("no copy logged:\n%s", p.stderr.String())
			}
		})
	}
	t.Run("GitHub Actions, stdout a file", func(t *testing.T) {
		t.Parallel()
		p := newProc(t, "issue-big", testchild.BigResult, env(t, true))
		path := filepath.Join(t.TempDir(), "result.md")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		p.cmd.Stdout, p.cmd.Stderr = f, &p.stderr
		code := exitCode(t, p.cmd.Run())
		f.Close()
		if code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
		}
		if b, _ := os.ReadFile(path); string(b) != want+"\n" {
			t.Errorf("the file has %d bytes, want the %d of the text and a newline, nothing added", len(b), len(want))
		}
	})
}

// A result of exactly the decoder's cap is whole in memory: written as it
// is, with no re-read. One byte more is copied from the transcript.
func TestResultAtTheCap(t *testing.T) {
	t.Parallel()
	for _, n := range []int{10, stream.MaxResultBytes, stream.MaxResultBytes + 1} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			t.Parallel()
			// Escapes and two-byte runes, so the line is longer than the text.
			text := strings.Repeat("é\n<", n/4) + strings.Repeat("x", n%4)
			line, _ := json.Marshal(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": text,
				"session_id": testchild.SessionID, "total_cost_usd": 0.01})
			p := newProc(t, "issue-cap", testchild.Replay,
				[]string{testchild.EnvTranscript + "=" + writeTranscript(t, testchild.InitLine, testchild.TextLine, string(line))}, "--log-format", "json")
			if code := p.run(); code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
			}
			if len(text) != n || p.stdout.String() != text+"\n" {
				t.Errorf("stdout: %d bytes, want the %d of the text and a newline", p.stdout.Len(), len(text))
			}
			if copied := strings.Contains(p.stderr.String(), copiedLog); copied != (n > stream.MaxResultBytes) {
				t.Errorf("%d bytes: copied from the transcript %v", n, copied)
			}
			noTroubleLogged(t, p.stderr.String())
		})
	}
}

// cutReport is the supervisor's Report of a run whose result (a line
// written to a transcript in dir) was longer than the decoder keeps.
func cutReport(t *testing.T) (event.Report, string) {
	t.Helper()
	const size = 2 * stream.MaxResultBytes
	period := testchild.BigResultPeriod
	line := `{"type":"result","subtype":"success","is_error":false,"result":"` + strings.Repeat(period, size/len(period)+1) + `"}`
	path := filepath.Join(t.TempDir(), "attempt-1.jsonl")
	if err := os.WriteFile(path, []byte(testchild.InitLine+"\n"+line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := stream.NewDecoder(f)
	d.Next()
	ev, err := d.Next()
	if err != nil || !ev.ResultTruncated {
		t.Fatalf("result line: %v, truncated %v", err, ev.ResultTruncated)
	}
	var whole struct{ Result string }
	json.Unmarshal([]byte(line), &whole)
	return event.Report{Issue: "issue-cut", RunDir: filepath.Dir(path), Result: ev.Result, ResultCut: true,
		ResultLine: stream.LineRef{Path: path, Offset: ev.Offset, Bytes: ev.Bytes}}, whole.Result
}

// When the transcript cannot be read again, the kept part is written, and
// the cut is reported: result_truncated in the report, an error log and a
// line on stderr. The exit code stays the run's. (Not parallel: the
// in-process command line changes directory.)
func TestResultTranscriptUnreadable(t *testing.T) {
	// One transcript, decoded once (2 MiB under -race costs seconds), copied
	// for each case to change.
	base, whole := cutReport(t)
	transcript, err := os.ReadFile(base.ResultLine.Path)
	if err != nil {
		t.Fatal(err)
	}
	for i, tt := range []struct {
		name   string
		change func(path string) error
	}{
		{"intact", func(string) error { return nil }},
		{"removed", os.Remove},
		{"cut short", func(path string) error { return os.Truncate(path, 3<<19) }},
		{"changed", func(path string) error {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(path, bytes.Replace(b, []byte("Line"), []byte("LINE"), 1), 0o600)
		}},
	} {
		// Each form reads the whole 2 MiB transcript under -race (1.5 s):
		// under -short (make check) each case is tried in one form, the
		// forms taking turns; make test tries both.
		forms := []bool{false, true}
		if testing.Short() {
			forms = forms[i%2 : i%2+1]
		}
		t.Run(tt.name, func(t *testing.T) {
			rep := base
			rep.RunDir = t.TempDir()
			rep.ResultLine.Path = filepath.Join(rep.RunDir, filepath.Base(base.ResultLine.Path))
			if err := os.WriteFile(rep.ResultLine.Path, transcript, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := tt.change(rep.ResultLine.Path); err != nil {
				t.Fatal(err)
			}
			cut := tt.name != "intact"
			want := whole
			if cut {
				want = rep.Result
			}
			for _, asJSON := range forms {
				c := newCLI(t)
				c.report = &rep
				args := []string{"issue-cut", "--prompt", c.prompt(), "--log-format", "json"}
				if asJSON {
					args = append(args, "--json")
				}
				o := c.run(args...)
				if o.code != 0 {
					t.Fatalf("exit %d; stderr:\n%s", o.code, o.stderr)
				}
				if asJSON {
					r := checkReport(t, o.stdout)
					if r.Result != want || r.ResultTruncated != cut {
						t.Errorf("json: result of %d bytes, truncated %v; want %d, %v", len(r.Result), r.ResultTruncated, len(want), cut)
					}
				} else if o.stdout != want+"\n" {
					t.Errorf("text: %d bytes on stdout, want %d and a newline", len(o.stdout), len(want))
				}
				line := "malarun: the result is cut to its first " + strconv.Itoa(len(rep.Result)) + " bytes: the rest could not be read again from its transcript: "
				if got := strings.Contains(o.stderr, "\n"+line); got != cut {
					t.Errorf("the line on stderr: %v, want %v:\n%s", got, cut, o.stderr)
				}
				if got := strings.Contains(o.stderr, `"level":"error"`) && strings.Contains(o.stderr, "the result text is cut"); got != cut {
					t.Errorf("the error log: %v, want %v:\n%s", got, cut, o.stderr)
				}
			}
		})
	}
}
