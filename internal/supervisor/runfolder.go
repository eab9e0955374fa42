package supervisor

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"

	"github.com/rs/zerolog"

	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/run"
	"github.com/malarun/malarun/internal/session"
	"github.com/malarun/malarun/internal/statefile"
	"github.com/malarun/malarun/internal/timelinefile"
)

// runFolder is the run's folder (<state>/<issue>/runs/<run-id>/) and
// what this malarun writes in it beside the transcripts: the timeline of
// decisions and receive times (timeline.go), the attempts' prompts
// rendered from the run's templates (prompts.go), and the folder made
// again when it was removed.
type runFolder struct {
	log   zerolog.Logger
	issue string
	// dir is the folder, as the record names it (record.Record.RunDir):
	// "" until the run is opened.
	dir  string
	tmpl prompts
	task []byte // the run's prompt (prompt.md), kept to make a removed run folder again
	// written are the attempt prompts this invocation wrote, by path: a
	// fresh session reuses the one it started with (ensureRunDir).
	written map[string][]byte

	// timeline is the run folder's record of decisions and receive times,
	// for malarun show (timeline.go); timelineWarned: its failure was logged.
	timeline       *timelinefile.Writer
	timelineWarned bool
}

// ensureRunDir makes the run folder again if it was removed while the run
// went on (a tidied state directory), with the run's prompt and the
// attempt prompts this invocation wrote (a fresh session starts again from
// the one its session began with), which malarun holds: the session lives
// on in claude's own files, so the run can go on; only the earlier
// transcripts are lost.
func (f *runFolder) ensureRunDir() error {
	if _, err := os.Stat(f.dir); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := os.MkdirAll(f.dir, 0o700); err != nil {
		return fmt.Errorf("make the removed run folder again: %w", err)
	}
	f.timeline.Reopen() // its file went with the folder
	files := map[string][]byte{filepath.Join(f.dir, "prompt.md"): f.task}
	maps.Copy(files, f.written)
	for path, text := range files {
		if err := writePrivate(path, text); err != nil {
			return fmt.Errorf("save a prompt in the run folder made again: %w", err)
		}
	}
	f.log.Warn().Str("run_dir", f.dir).Msg("the run folder was removed while the run went on: made again with the run's prompt; the transcripts of earlier attempts are gone")
	return nil
}

// promptPath is the file attempt a reads on stdin: the one writePrompt
// writes for it, or the one it reuses (the run's prompt.md, or the prompt
// its session started with).
func (f *runFolder) promptPath(a run.Attempt) string {
	n := a.N
	if a.Prompt.Template == run.NoTemplate {
		if a.Prompt.Written == 0 {
			return filepath.Join(f.dir, "prompt.md")
		}
		n = a.Prompt.Written
	}
	return filepath.Join(f.dir, fmt.Sprintf("attempt-%d.prompt.md", n))
}

// writePrompt renders attempt a's template into the run folder (nothing
// for a prompt already written).
func (f *runFolder) writePrompt(a run.Attempt) error {
	t, err := f.tmpl.of(a.Prompt.Template)
	if err != nil {
		return &RunError{Kind: outcome.Usage, Detail: err.Error()}
	}
	if t == nil {
		return nil
	}
	d := a.Prompt.Data
	// A prompt names as many calls and tasks as a record does (the first
	// ones), whether they come from this malarun's attempt or a record.
	calls, callsMore := record.Named(d.Interrupted, d.InterruptedMore)
	tasks, tasksMore := record.Named(d.Tasks, d.TasksMore)
	text, err := render(t, promptData{IssueID: f.issue, Task: string(f.task), Interrupted: calls, InterruptedMore: callsMore,
		Tasks: tasks, TasksMore: tasksMore, Hooks: d.Hooks, CutReply: d.CutReply, Reason: d.Reason, Checkpoint: d.Checkpoint, LimitNote: d.LimitNote})
	if err != nil {
		return &RunError{Kind: outcome.Usage, Detail: err.Error()}
	}
	if err := f.ensureRunDir(); err != nil {
		return err
	}
	path := f.promptPath(a)
	if err := writePrivate(path, text); err != nil {
		return fmt.Errorf("save the prompt of attempt %d: %w", a.N, err)
	}
	if f.written == nil {
		f.written = map[string][]byte{}
	}
	f.written[path] = text
	return nil
}

// promptNotSeen is the session file that shows the attempt's prompt did
// not reach the conversation although the model answered ("" when it did,
// or nothing can be told: docs/design.md §D36). Read only after a success:
// what else ended the attempt decides without it.
func (f *runFolder) promptNotSeen(res *attemptResult, env []string) string {
	if !res.log.Succeeded() || !res.machine.ResultStands() {
		return ""
	}
	path, from := res.sessionFile, res.sessionFrom
	if path == "" { // a new session: the CLI made the file
		path, from = session.Path(env, res.spec.SessionID), 0
	}
	prompt := f.promptText(res.spec)
	v := session.Check(path, from, prompt)
	f.log.Debug().Int("attempt", res.spec.N).Str("session_file", path).Stringer("prompt", v).Msg("the prompt in claude's session file")
	if v != session.NotSeen {
		return ""
	}
	f.log.Warn().Int("attempt", res.spec.N).Str("session_file", path).
		Msg("claude said success, but its session holds no user message with the prompt: the model answered without the task")
	return path
}

// promptText is what attempt a read on stdin (nil when it cannot be read
// again: nothing is judged then).
func (f *runFolder) promptText(a run.Attempt) []byte {
	path := f.promptPath(a)
	if text, ok := f.written[path]; ok {
		return text
	}
	if a.Prompt.Template == run.NoTemplate && a.Prompt.Written == 0 {
		return f.task
	}
	text, err := statefile.Read(path, MaxPromptBytes)
	if err != nil {
		return nil
	}
	return text
}
