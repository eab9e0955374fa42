package supervisor_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/run"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// interruptedRun leaves issue-1 interrupted after its first attempt made a
// (side-effect) tool call: a run the next invocation continues.
func interruptedRun(t *testing.T) *harness {
	h := newHarness(t, testchild.ResumeAware, testchild.EnvLines+"=2",
		testchild.EnvTranscript+"="+transcriptFile(t, testchild.InitLine, testchild.ToolLine))
	h.cfg.IdleTimeout = time.Hour
	go func() {
		waitForTranscriptLine(t, h.cfg.StateDir, `"name":"Bash"`)
		h.signals <- syscall.SIGINT
	}()
	if _, err, _ := h.run(); !errors.Is(err, outcome.Interrupted) {
		t.Fatalf("first run: %v", err)
	}
	return h
}

func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func recordOf(t *testing.T, h *harness) record.Record {
	t.Helper()
	r, err := journal.ReadRecord(filepath.Join(h.cfg.StateDir, h.cfg.IssueID, journal.RecordFile))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A rerun with another prompt changes nothing and says how to go on either way.
func TestRerunWithAnotherPromptIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := interruptedRun(t)
		recordFile := filepath.Join(h.cfg.StateDir, "issue-1", journal.RecordFile)
		before, _ := os.ReadFile(recordFile)
		h.cfg.Prompt, h.cfg.PromptSource = []byte("Write the release notes."), "notes.md"
		_, err, _ := h.run()
		wantKind(t, err, outcome.Usage, "is not the one")
		if !strings.HasPrefix(err.Error(), "refused: the prompt changed: issue issue-1: ") {
			t.Errorf("the refusal does not say what it is first: %v", err)
		}
		for _, want := range []string{"notes.md", hashOf("Write the release notes.")[:12], hashOf("Fix the bug.")[:12],
			"--prompt-change=resume", "--prompt-change=start_over", "--reset", "prompt.md"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the refusal does not say %q: %v", want, err)
			}
		}
		if after, _ := os.ReadFile(recordFile); !bytes.Equal(before, after) {
			t.Errorf("the refusal changed the record:\n%s\nto\n%s", before, after)
		}
		if n := len(h.attempts()); n != 1 {
			t.Errorf("%d attempts after the refusal, want the first one only", n)
		}
		// The same prompt again continues the run, as before.
		h.cfg.Prompt = []byte("Fix the bug.")
		if _, err, _ := h.run(); err != nil {
			t.Fatalf("the same prompt: %v", err)
		}
		if r := recordOf(t, h); len(r.PromptChanges) != 0 || r.PromptSHA256 != hashOf("Fix the bug.") {
			t.Errorf("record after a rerun with the same prompt: changes %v, prompt %s", r.PromptChanges, r.PromptSHA256)
		}
	})
}

// prompt_change resume: the recorded run goes on with its own task.
func TestPromptChangeResumeContinuesTheRecordedTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := interruptedRun(t)
		h.cfg.Prompt, h.cfg.PromptChange = []byte("Write the release notes."), run.PromptChangeResume
		rep, err, _ := h.run()
		if err != nil {
			t.Fatal(err)
		}
		flag, id, first, prompt := secondAttempt(t, h)
		// The resume prompt goes on with the session's own task, and never
		// mentions the other one.
		if flag != "--resume" || id != first || strings.Contains(prompt, "release notes") {
			t.Errorf("second attempt: %s %s (first %s), prompt:\n%s", flag, id, first, prompt)
		}
		r := recordOf(t, h)
		if len(r.PromptChanges) != 1 || r.PromptSHA256 != hashOf("Fix the bug.") || r.RunID != filepath.Base(rep.RunDir) {
			t.Fatalf("record: %+v", r)
		}
		c := r.PromptChanges[0]
		if c.Decision != "resume" || c.RunID != r.RunID || c.RecordedSHA256 != hashOf("Fix the bug.") || c.GivenSHA256 != hashOf("Write the release notes.") {
			t.Errorf("prompt change recorded as %+v", c)
		}
		if !strings.Contains(h.logs.String(), "prompt_change resume") {
			t.Errorf("the decision is not logged:\n%s", h.logs.String())
		}
	})
}

// prompt_change start_over: a new run with the new prompt; the old stays on disk.
func TestPromptChangeStartOverStartsTheNewTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := interruptedRun(t)
		old := recordOf(t, h)
		h.cfg.Prompt, h.cfg.PromptChange = []byte("Write the release notes."), run.PromptChangeStartOver
		h.cfg.Env = testchild.Env(testchild.Replay, testchild.EnvArgsFile+"="+h.args,
			testchild.EnvTranscript+"="+transcriptFile(t, testchild.InitLine, testchild.TextLine, testchild.Result))
		rep, err, _ := h.run()
		if err != nil {
			t.Fatal(err)
		}
		flag, id, first, prompt := secondAttempt(t, h)
		if flag != "--session-id" || id == first || !strings.Contains(prompt, "Write the release notes.") {
			t.Errorf("second attempt: %s %s (first %s), prompt:\n%s", flag, id, first, prompt)
		}
		r := recordOf(t, h)
		if r.RunID == old.RunID || len(r.Runs) != 2 || r.Attempts != 1 || r.PromptSHA256 != hashOf("Write the release notes.") ||
			len(r.PromptChanges) != 1 || r.PromptChanges[0].Decision != "start_over" || r.PromptChanges[0].RunID != old.RunID {
			t.Errorf("record after start_over: %+v", r)
		}
		if b, _ := os.ReadFile(filepath.Join(old.RunDir, "prompt.md")); string(b) != "Fix the bug." {
			t.Errorf("the old run's prompt is %q", b)
		}
		if b, _ := os.ReadFile(filepath.Join(rep.RunDir, "prompt.md")); string(b) != "Write the release notes." {
			t.Errorf("the new run's prompt is %q", b)
		}
	})
}

// --reset needs no decision: it starts over whatever the prompt.
func TestResetWithAnotherPromptStartsOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := interruptedRun(t)
		h.cfg.Prompt, h.cfg.Reset = []byte("Write the release notes."), true
		h.cfg.Env = testchild.Env(testchild.Replay, testchild.EnvArgsFile+"="+h.args,
			testchild.EnvTranscript+"="+transcriptFile(t, testchild.InitLine, testchild.TextLine, testchild.Result))
		if _, err, _ := h.run(); err != nil {
			t.Fatal(err)
		}
		if r := recordOf(t, h); len(r.PromptChanges) != 0 || len(r.Runs) != 2 {
			t.Errorf("record after --reset: %+v", r)
		}
	})
}

// A tidied run folder lost prompt.md: the same prompt given again (its
// hash is the record's) saves it again and the run goes on.
func TestRemovedPromptIsSavedAgainFromTheSamePrompt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := interruptedRun(t)
		rec := recordOf(t, h)
		os.Remove(filepath.Join(rec.RunDir, "prompt.md"))
		if _, err, _ := h.run(); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(rec.RunDir, "prompt.md")); string(b) != "Fix the bug." {
			t.Errorf("prompt.md is %q", b)
		}
		if flag, _, _, _ := secondAttempt(t, h); flag != "--resume" {
			t.Errorf("second attempt started with --%s", flag)
		}
	})
}

// secondAttempt is how the fake child saw the run's second attempt: its
// session flag and id, the first attempt's session id, and what it read.
func secondAttempt(t *testing.T, h *harness) (flag, id, first, seen string) {
	t.Helper()
	at := h.attempts()
	if len(at) != 2 {
		t.Fatalf("%d attempts, want 2", len(at))
	}
	flag, id = sessionFlag(t, at[1])
	_, first = sessionFlag(t, at[0])
	return flag, id, first, at[1]
}

// A FIFO (or a link, or a sparse file of gigabytes) planted as the
// interrupted run's prompt.md: with the same prompt given it is removed and
// saved again, and the run goes on; with another prompt it is a usage error
// (exit 2) at once, the record untouched. Nothing blocks on the FIFO.
func TestPlantedPromptNeverHangs(t *testing.T) {
	plants := map[string]func(string) error{
		"fifo": func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"link": func(p string) error { return os.Symlink("/etc/passwd", p) },
		"huge": func(p string) error { return os.WriteFile(p, nil, 0o600) },
	}
	for name, plant := range plants {
		for _, same := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s same=%v", name, same), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					h := interruptedRun(t)
					rec := recordOf(t, h)
					path := filepath.Join(rec.RunDir, "prompt.md")
					os.Remove(path)
					if err := plant(path); err != nil {
						t.Fatal(err)
					}
					if name == "huge" {
						os.Truncate(path, 3<<30)
					}
					if !same {
						// Told to continue the recorded run, whose prompt is gone.
						h.cfg.Prompt, h.cfg.PromptChange = []byte("Another task."), run.PromptChangeResume
					}
					_, err, _ := h.run()
					if !same {
						wantKind(t, err, outcome.Usage, "the recorded run's prompt is damaged")
						if r := recordOf(t, h); r.Status != rec.Status || r.Owner != rec.Owner {
							t.Errorf("the record changed: %s %+v", r.Status, r.Owner)
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					if b, _ := os.ReadFile(path); string(b) != "Fix the bug." {
						t.Errorf("prompt.md is %q", b)
					}
				})
			})
		}
	}
}
