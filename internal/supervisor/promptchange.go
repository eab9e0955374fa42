package supervisor

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/statefile"
)

// A rerun of an issue whose run can be continued (interrupted, stopped,
// waiting, or orphaned by a malarun that died) continues that run's task.
// When the prompt given now is another one, continuing in silence would do
// a task the user no longer asked for, and starting over in silence would
// throw the recorded run's work away: either is a choice only the user can
// make (config prompt_change; docs/design.md §D18).

// promptHash is the SHA-256 of a prompt, in hex: what the record keeps.
func promptHash(prompt []byte) string {
	sum := sha256.Sum256(prompt)
	return hex.EncodeToString(sum[:])
}

// recordedPromptHash is the hash of the run folder's prompt.md, for a
// record older than version 4, which does not keep it; "" when it cannot
// be read.
func recordedPromptHash(rec record.Record) string {
	b, err := statefile.Read(filepath.Join(rec.RunDir, "prompt.md"), MaxPromptBytes)
	if err != nil {
		return ""
	}
	return promptHash(b)
}

// logChange says what a rerun with another prompt does (run.Open decided).
func (p *planner) logChange(c *record.PromptChange, rec record.Record) {
	switch {
	case c == nil:
	case c.Decision == record.PromptResume:
		p.log.Warn().Str("recorded_prompt", filepath.Join(rec.RunDir, "prompt.md")).Str("recorded_sha256", c.RecordedSHA256).Str("given_sha256", c.GivenSHA256).
			Msg("prompt_change resume: this prompt differs from the recorded run's; continuing the recorded run with its own prompt")
	case c.Decision == record.PromptStartOver:
		p.log.Warn().Str("recorded_run", c.RunID).Str("recorded_sha256", c.RecordedSHA256).Str("given_sha256", c.GivenSHA256).
			Msg("prompt_change start_over: this prompt differs from the recorded run's; starting a new run with it (the recorded run stays on disk)")
	}
}

// MaxPromptBytes bounds a prompt, the user's and the run folder's copy:
// the largest real prompts are a few MB, and the largest context window
// holds about 4 MB of text. Material beyond that belongs in files the
// agent reads, not in the prompt.
const MaxPromptBytes = 32 << 20

// restorePrompt makes the run folder's prompt.md again when it was removed
// (a tidied state directory) or replaced by something that is no prompt
// (a FIFO, a link, a file over MaxPromptBytes: statefile), and this
// invocation was given the very prompt the run began with, as the record's
// hash shows: the run can go on. Such a planted prompt with another prompt
// given is a usage error, before the record is touched: the run cannot be
// continued, and waiting on it would hang.
func (p *planner) restorePrompt(rec record.Record, path string) error {
	same := rec.PromptSHA256 == promptHash(p.cfg.Prompt)
	f, err := statefile.OpenAtMost(path, MaxPromptBytes)
	if err == nil {
		f.Close()
	}
	var notRegular *statefile.NotRegularError
	var tooLarge *statefile.TooLargeError
	planted := errors.As(err, &notRegular) || errors.As(err, &tooLarge)
	switch {
	case planted && !same:
		return &RunError{Kind: outcome.Usage, Detail: fmt.Sprintf("the recorded run's prompt is damaged (%v); run with --reset to start the issue over", err)}
	case planted:
		if rmErr := os.Remove(path); rmErr != nil {
			return fmt.Errorf("remove the damaged prompt: %w", rmErr)
		}
		p.log.Warn().Err(err).Msg("the run's prompt.md was not a prompt malarun wrote: removed, and saved again from this prompt")
	case !errors.Is(err, fs.ErrNotExist) || !same:
		return nil
	}
	if err := os.MkdirAll(rec.RunDir, 0o700); err != nil {
		return fmt.Errorf("make the removed run folder again: %w", err)
	}
	if err := writePrivate(path, p.cfg.Prompt); err != nil {
		return fmt.Errorf("save the run's prompt again: %w", err)
	}
	if !planted {
		p.log.Warn().Str("prompt", path).Msg("the run's prompt.md was removed: saved again from this prompt, which is the same (its SHA-256 is the record's)")
	}
	return nil
}
