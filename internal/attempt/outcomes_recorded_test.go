package attempt

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/stream"
)

// playRecorded feeds a recording of the real CLI (testdata/transcripts/<version>/)
// to a machine and a log, a second apart, ends the stream and classifies
// the attempt as the CLI ended it (its exit code from the .stderr's last
// line, as scripts/record-transcripts.sh writes it).
func playRecorded(t *testing.T, version, name string) (Ending, string, *Log, NoResponses) {
	t.Helper()
	base := filepath.Join("..", "..", "testdata", "transcripts", version, name)
	data, err := os.ReadFile(base + ".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := os.ReadFile(base + ".stderr")
	if err != nil {
		t.Fatal(err)
	}
	code := 0
	if strings.Contains(string(stderr), "# exit code 1;") {
		code = 1
	}
	m, log := New(defaults, t0), NewLog("s")
	var nr NoResponses
	dec := stream.NewDecoder(bytes.NewReader(data))
	now := t0
	for {
		ev, err := dec.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Second)
		log.Observe(ev)
		nr.Observe(&ev, now)
		m.Step(Input{Kind: Line, Event: ev}, now)
	}
	m.Step(Input{Kind: StreamEnd}, now)
	nr.End(now)
	lines := strings.Split(strings.TrimRight(string(stderr), "\n"), "\n") // the last is the script's "# exit code"
	tail := strings.TrimSpace(strings.Join(lines[:len(lines)-1], "\n"))
	e, why := Classify(Ended{Machine: m, Log: log, Exit: Exit{Code: code}, StderrTail: tail})
	return e, why, log, nr
}

// What the pinned CLIs printed (docs/design.md §F37, §F38) is decided as
// §D36 says.
func TestRecordedOutcomes(t *testing.T) {
	for _, c := range []struct {
		version, name string
		want          Ending
		says          string
	}{
		{"2.1.332", "startup-config-invalid", ErrorResult, "claude's configuration file /home/user/.claude.json is not valid JSON"},
		{"2.1.332", "startup-proxy-invalid", ErrorResult, `claude said: Invalid proxy URL in HTTPS_PROXY: "not-a-url" cannot be parsed as a URL.`},
		{"2.1.332", "startup-bypass-root", ErrorResult, "--dangerously-skip-permissions is refused when claude runs as root"},
		{"2.1.332", "startup-tmpdir-unusable", ErrorResult, "CLAUDE_CODE_TMPDIR"},
		{"2.1.332", "prompt-slash-clear", PromptLost, "the model never saw the prompt"},
		{"2.1.332", "no-response", Success, "claude reported success"},
		{"2.1.332", "no-response-twice", APIError, "API Error: No response from API"},
		{"2.1.197", "startup-config-invalid", EarlyExit, "Configuration error in /home/user/.claude.json"},
		{"2.1.197", "startup-proxy-invalid", EarlyExit, "HTTPS_PROXY"},
		{"2.1.197", "startup-bypass-root", EarlyExit, "--dangerously-skip-permissions cannot be used with root"},
		{"2.1.197", "startup-tmpdir-unusable", EarlyExit, "CLAUDE_CODE_TMPDIR"},
		{"2.1.197", "prompt-slash-clear", PromptLost, "the model never saw the prompt"},
	} {
		t.Run(c.version+"/"+c.name, func(t *testing.T) {
			got, why, log, nr := playRecorded(t, c.version, c.name)
			if got != c.want || !strings.Contains(why, c.says) {
				t.Errorf("%v %q, want %v saying %q", got, why, c.want, c.says)
			}
			if r := log.Result; r != nil && r.StartupFailureReason != "" && UnknownResult(r) != "" {
				t.Errorf("a start-up failure malarun does not know: %s", UnknownResult(r))
			}
			switch c.name {
			case "no-response":
				// One request never answered: claude's 12 s, and the second
				// (in this replay) to the answer.
				if nr.Retries != 1 || nr.Waited != 12*time.Second || nr.Cost != 13*time.Second || log.ResultsLost != 0 {
					t.Errorf("no response %+v, results lost %d", nr, log.ResultsLost)
				}
			case "no-response-twice":
				if nr.Retries != 1 || log.Result.APIError != "no_response" {
					t.Errorf("no response %+v, api_error %q", nr, log.Result.APIError)
				}
			}
		})
	}
}
