package supervisor

import (
	"bytes"
	"fmt"
	"os"
	"text/template"

	"github.com/malarun/malarun/configs"
	"github.com/malarun/malarun/internal/retry"
)

// resumeData is what the resume template sees.
type resumeData struct {
	IssueID string
	// Interrupted are the tool calls still running when the attempt was cut
	// off: the CLI drops them from the resumed history (DESIGN.md fact 16),
	// so only malarun can tell the agent about them.
	Interrupted []retry.ToolCall
	Reason      string // why the last attempt ended
}

// loadTemplate parses the file at path, or the built-in prompts/<name> when
// path is "". Parsing happens before the first attempt, so a broken
// template is a configuration error, not a failure hours into a run.
func loadTemplate(name, path string) (*template.Template, error) {
	var text []byte
	var err error
	if path == "" {
		text, err = configs.Prompts.ReadFile("prompts/" + name)
	} else {
		text, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("read prompt template: %w", err)
	}
	t, err := template.New(name).Option("missingkey=error").Parse(string(text))
	if err != nil {
		return nil, fmt.Errorf("prompt template %s: %w", firstNonEmpty(path, name), err)
	}
	return t, nil
}

func render(t *template.Template, data any) ([]byte, error) {
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return nil, fmt.Errorf("render prompt template %s: %w", t.Name(), err)
	}
	return b.Bytes(), nil
}
