package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/malarun/malarun/internal/testing/testchild"
)

// phaseCase is a stream that ends in one phase (docs/design.md §D30): the
// lines the fake child prints before it hangs, and the flag that sets the
// allowance of that phase.
type phaseCase struct {
	name  string
	lines []string
	flag  string
	ping  bool // the child prints a ping every 100 ms while it hangs
}

func phaseCases() []phaseCase {
	se := func(event string) string {
		return `{"type":"stream_event","event":` + event + `,"session_id":"S","parent_tool_use_id":null}`
	}
	start := []string{`{"type":"system","subtype":"init","session_id":"S","model":"m"}`,
		`{"type":"system","subtype":"status","status":"requesting","session_id":"S"}`}
	reply := append(start, se(`{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":1,"output_tokens":1}}}`))
	text := append(append([]string(nil), reply...), se(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
		se(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"The answer is"}}`))
	return []phaseCase{
		{"waiting", start, "--idle-timeout", false},
		{"text", text, "--text-timeout", false},
		{"text, pinging", text, "--text-timeout", true},
		{"thinking", append(append([]string(nil), reply...), se(`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`)), "--thinking-timeout", false},
		{"tool_input", append(append([]string(nil), reply...), se(`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"Write","input":{}}}`)), "--tool-input-timeout", false},
		{"tool", append(append([]string(nil), start...), `{"type":"assistant","message":{"id":"msg_1","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"make"}}],"usage":{"input_tokens":1,"output_tokens":1}},"session_id":"S","parent_tool_use_id":null}`), "--tool-timeout", false},
	}
}

// phases measures, for each phase, how late after its allowance the kill
// signal reaches a child whose stream stopped there (from its last line of
// progress: the pings after it move nothing), and the recovery latency:
// from hang_detected to the resumed attempt's first line, as malarun's
// timeline has them.
func (h *harness) phases(o options, rep *report) error {
	allowance := o.idleTO
	late := map[string][]float64{}
	for _, c := range phaseCases() {
		path := filepath.Join(h.tmp, "phase-"+strings.NewReplacer(" ", "-", ",", "").Replace(c.name)+".jsonl")
		if err := os.WriteFile(path, []byte(strings.Join(c.lines, "\n")+"\n"), 0o600); err != nil {
			return err
		}
		env := []string{testchild.EnvTranscript + "=" + path}
		if c.ping {
			env = append(env, testchild.EnvPing+"=100ms")
		}
		// Every allowance an hour but the one measured.
		flags := []string{"--idle-timeout", "1h", "--tool-timeout", "1h", "--text-timeout", "1h", "--thinking-timeout", "1h",
			"--tool-input-timeout", "1h", c.flag, allowance.String(), "--kill-grace", "5s", "--max-attempts", "1"}
		for i := range o.phaseHangs {
			r, err := h.start(runSpec{issue: fmt.Sprintf("phase-%d-%d", len(late), i), child: testchild.TimedHang, env: env, flags: flags})
			if err != nil {
				return err
			}
			if r.code != 3 || r.child == nil || r.child.TermNs == 0 {
				return fmt.Errorf("phase %s: want exit 3 after a SIGTERM the child saw; %s", c.name, r.describe())
			}
			late[c.name] = append(late[c.name], float64(r.child.TermNs-r.child.LastLineNs-allowance.Nanoseconds())/ms)
		}
	}
	recovery, err := h.recovery(o)
	if err != nil {
		return err
	}
	rep.raw["phases"] = map[string]any{"late_ms": late, "recovery_ms": recovery}
	rep.phases(o, allowance, late, summarize(recovery))
	return nil
}

// recovery runs hangs that are resumed (the fake child hangs after a tool
// call and succeeds when resumed) and reads each run's timeline: the time
// from hang_detected to the first line of attempt 2.
func (h *harness) recovery(o options) ([]float64, error) {
	transcript := filepath.Join(h.tmp, "recovery.jsonl")
	if err := os.WriteFile(transcript, []byte(testchild.InitLine+"\n"+testchild.ToolLine+"\n"), 0o600); err != nil {
		return nil, err
	}
	var out []float64
	for i := range o.phaseHangs {
		issue := fmt.Sprintf("recovery-%d", i)
		r, err := h.start(runSpec{issue: issue, child: testchild.ResumeAware,
			env:   []string{testchild.EnvLines + "=2", testchild.EnvTranscript + "=" + transcript},
			flags: []string{"--tool-timeout", o.idleTO.String(), "--kill-grace", "5s", "--backoff", "0s", "--max-attempts", "2"}})
		if err != nil {
			return nil, err
		}
		if r.code != 0 {
			return nil, fmt.Errorf("recovery %d: %s", i, r.describe())
		}
		d, err := hangToResumed(filepath.Join(h.state, issue))
		if err != nil {
			return nil, fmt.Errorf("recovery %d: %w", i, err)
		}
		out = append(out, float64(d)/ms)
	}
	return out, nil
}

// hangToResumed reads an issue's timeline: hang_detected to the first
// line of attempt 2.
func hangToResumed(issueDir string) (time.Duration, error) {
	files, _ := filepath.Glob(filepath.Join(issueDir, "runs", "*", "timeline.jsonl"))
	if len(files) != 1 {
		return 0, fmt.Errorf("%d timelines in %s", len(files), issueDir)
	}
	f, err := os.Open(files[0])
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var hang time.Time
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e struct {
			Time    time.Time `json:"time"`
			Event   string    `json:"event"`
			Attempt int       `json:"attempt"`
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		switch {
		case e.Event == "hang_detected":
			hang = e.Time
		case e.Event == "line" && e.Attempt == 2 && !hang.IsZero():
			return e.Time.Sub(hang), nil
		}
	}
	return 0, fmt.Errorf("no hang_detected followed by a line of attempt 2 in %s", files[0])
}
