package supervisor

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"text/template"

	"github.com/malarun/malarun/configs"
	"github.com/malarun/malarun/internal/run"
	"github.com/malarun/malarun/internal/stream"
)

// promptData is what every prompt template sees (a prompts_dir template
// may use any of it): what internal/run chose (run.PromptData), the issue
// and the task.
type promptData struct {
	IssueID string
	// Interrupted are the tool calls still running when the attempt was cut
	// off: the CLI drops them from the resumed history (docs/design.md §F16),
	// so only malarun can tell the agent about them. At most
	// record.MaxInFlight are named; InterruptedMore counts the rest.
	Interrupted     []stream.ToolUse
	InterruptedMore int
	// Tasks are the background tasks killed with the attempt: the CLI will
	// never notify the resumed session of them. TasksMore, as
	// InterruptedMore.
	Tasks     []stream.Task
	TasksMore int
	// Hooks name the hooks cut off with the attempt ("the Stop hook").
	Hooks []string
	// CutReply says what the model was writing when its reply was cut off.
	CutReply   string
	Reason     string // why the last attempt ended
	Checkpoint string // the previous session's checkpoint (continuation)
	Task       string // the original prompt (fallback)
	// LimitNote (resume) says the session was stopped by a usage limit
	// that has since reset, so the agent does not look for a fault of its own.
	LimitNote string
}

// prompts are the templates of a run: those of prompts_dir parsed when
// the run opens, the built-in ones (nil here) when first used. Most runs
// never resume or continue, and the built-in ones are known to parse
// (TestBuiltInPromptsParse); parsing them cost every start about 0.1 ms.
type prompts struct {
	resume, checkpoint, continuation, fallback *template.Template
}

// loadPrompts parses the templates of dir before the first attempt, so a
// broken one is a configuration error, not a failure hours into a run. A
// file in dir replaces the built-in template of the same name.
func loadPrompts(dir string) (prompts, error) {
	var p prompts
	if dir == "" {
		return p, nil
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return prompts{}, fmt.Errorf("prompts_dir %s is not a directory", dir)
	}
	for _, t := range []run.Template{run.ResumeTemplate, run.CheckpointTemplate, run.ContinuationTemplate, run.FallbackTemplate} {
		slot, name := p.slot(t)
		text, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue // the built-in one
		}
		if err != nil {
			return prompts{}, fmt.Errorf("read prompt template: %w", err)
		}
		if *slot, err = parseTemplate(filepath.Join(dir, name), text); err != nil {
			return prompts{}, err
		}
	}
	return p, nil
}

// slot is where the template t is kept, and its file name ("" and nil for
// run.NoTemplate).
func (p *prompts) slot(t run.Template) (**template.Template, string) {
	switch t {
	case run.ResumeTemplate:
		return &p.resume, "resume.md"
	case run.CheckpointTemplate:
		return &p.checkpoint, "checkpoint.md"
	case run.ContinuationTemplate:
		return &p.continuation, "continuation.md"
	case run.FallbackTemplate:
		return &p.fallback, "fallback.md"
	}
	return nil, ""
}

// of is the template t names (nil for run.NoTemplate), the built-in one
// parsed the first time.
func (p *prompts) of(t run.Template) (*template.Template, error) {
	slot, name := p.slot(t)
	if slot == nil || *slot != nil {
		if slot == nil {
			return nil, nil
		}
		return *slot, nil
	}
	text, err := configs.Prompts.ReadFile("prompts/" + name)
	if err != nil {
		return nil, fmt.Errorf("built-in prompt %s: %w", name, err)
	}
	*slot, err = parseTemplate("built-in "+name, text)
	return *slot, err
}

func parseTemplate(source string, text []byte) (*template.Template, error) {
	t, err := template.New(source).Option("missingkey=error").Parse(string(text))
	if err != nil {
		return nil, fmt.Errorf("prompt template %s: %w", source, err)
	}
	return t, nil
}

func render(t *template.Template, data promptData) ([]byte, error) {
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return nil, fmt.Errorf("render prompt template %s: %w", t.Name(), err)
	}
	return b.Bytes(), nil
}
