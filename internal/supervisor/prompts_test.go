package supervisor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/malarun/malarun/internal/run"
	"github.com/malarun/malarun/internal/stream"
)

var allTemplates = []run.Template{run.ResumeTemplate, run.CheckpointTemplate, run.ContinuationTemplate, run.FallbackTemplate}

// fullPromptData fills every field a template may use.
func fullPromptData() promptData {
	return promptData{IssueID: "issue-1", Interrupted: []stream.ToolUse{{Name: "Bash", Input: `{"command":"make"}`}},
		Tasks: []stream.Task{{ID: "t1", Description: "tests"}}, Hooks: []string{"the Stop hook"}, CutReply: "text",
		Reason: "hang", Checkpoint: "done: a", Task: "fix it", LimitNote: "the limit reset"}
}

// The built-in templates are parsed only when a run first needs one (most
// runs never resume): each must parse and render, or a run would fail at
// its first resume instead of at its start.
func TestBuiltInPromptsParse(t *testing.T) {
	p, err := loadPrompts("")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range allTemplates {
		tmpl, err := p.of(tt)
		if err != nil || tmpl == nil {
			t.Fatalf("template %v: %v, %v", tt, tmpl, err)
		}
		text, err := render(tmpl, fullPromptData())
		if err != nil || len(text) == 0 {
			t.Errorf("template %v renders %q, %v", tt, text, err)
		}
		if again, _ := p.of(tt); again != tmpl {
			t.Errorf("template %v parsed twice", tt)
		}
	}
	if tmpl, err := p.of(run.NoTemplate); tmpl != nil || err != nil {
		t.Errorf("a written prompt has a template: %v, %v", tmpl, err)
	}
}

// prompts_dir's templates are parsed when the run opens: a broken one is
// a configuration error naming its file then; one that parses replaces
// the built-in of its name, and the others stay built in.
func TestPromptsDirTemplates(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "continuation.md"), []byte("Go on with {{.IssueID}}."), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := loadPrompts(dir)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := p.of(run.ContinuationTemplate)
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := render(tmpl, fullPromptData()); string(text) != "Go on with issue-1." {
		t.Errorf("continuation renders %q, want the prompts_dir one", text)
	}
	resume, _ := p.of(run.ResumeTemplate)
	if text, _ := render(resume, fullPromptData()); !strings.Contains(resume.Name(), "built-in") || len(text) == 0 {
		t.Errorf("resume is %q: want the built-in one", resume.Name())
	}

	broken := filepath.Join(dir, "resume.md")
	if err := os.WriteFile(broken, []byte("{{.IssueID"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadPrompts(dir); err == nil || !strings.Contains(err.Error(), broken) {
		t.Errorf("a broken template: %v, want an error naming %s", err, broken)
	}
	file := filepath.Join(dir, "continuation.md")
	if _, err := loadPrompts(file); err == nil || !strings.Contains(err.Error(), "prompts_dir "+file) {
		t.Errorf("prompts_dir a file: %v, want an error naming it", err)
	}
}
