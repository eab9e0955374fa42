package supervisor_test

import (
	"strings"
	"testing"
	"testing/synctest"

	"github.com/malarun/malarun/internal/testing/testchild"
)

// A CLI newer than the newest tested is warned about only when it prints
// something malarun does not know, naming it, once per kind in a run; the
// version alone says nothing (issue 34).
func TestVersionWarningFromEvidence(t *testing.T) {
	init := func(v string) string {
		return `{"type":"system","subtype":"init","cwd":"/tmp","session_id":"` + testchild.SessionID + `","model":"m","claude_code_version":"` + v + `"}`
	}
	novel := `{"type":"system","subtype":"memory_swept","session_id":"` + testchild.SessionID + `"}`
	for _, tc := range []struct {
		name  string
		lines []string
		want  []string // warnings, each once
		never []string
	}{
		{"newest tested, known lines", []string{init("2.1.332"), testchild.ToolLine, testchild.Result}, nil,
			[]string{`"level":"warn"`}},
		{"newer, known lines", []string{init("2.1.999"), testchild.ToolLine, testchild.Result}, nil,
			[]string{`"level":"warn"`}},
		{"newer, a new kind of line twice", []string{init("2.1.999"), novel, testchild.ToolLine, novel, testchild.Result},
			[]string{`"line":"system subtype memory_swept","claude_code_version":"2.1.999","newer_than_tested":true,"message":"claude printed a kind of line malarun does not know: it is ignored"`},
			nil},
		{"older than supported", []string{init("2.1.100"), testchild.Result},
			[]string{`"claude_code_version":"2.1.100","oldest_supported":"2.1.197","message":"claude is older than the oldest version malarun supports: upgrade it"`},
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, testchild.Replay, testchild.EnvTranscript+"="+transcriptFile(t, tc.lines...))
				if _, err, _ := h.run(); err != nil {
					t.Fatal(err)
				}
				logs := h.logs.String()
				for _, w := range tc.want {
					if n := strings.Count(logs, w); n != 1 {
						t.Errorf("%d of %s, want 1:\n%s", n, w, logs)
					}
				}
				for _, w := range tc.never {
					if strings.Contains(logs, w) {
						t.Errorf("logs hold %s:\n%s", w, logs)
					}
				}
			})
		})
	}
}
