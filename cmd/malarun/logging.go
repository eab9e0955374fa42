package main

import (
	"fmt"
	"io"
	"time"

	"github.com/rs/zerolog"

	"github.com/malarun/malarun/internal/ui"
)

// newLogger writes to w (stderr, or the status line's terminal writer):
// human-readable when tty (stderr is a terminal), JSON lines otherwise (CI
// logs, files), unless log_format says which. floor raises the level: the
// status line replaces info logs, --quiet keeps only errors.
func newLogger(w io.Writer, tty bool, format, level string, floor zerolog.Level, getenv func(string) string) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil {
		return zerolog.Nop(), fmt.Errorf("log_level %q: %w", level, err)
	}
	out := w
	switch format {
	case "console":
	case "json":
	case "auto":
		if tty {
			format = "console"
		}
	default:
		return zerolog.Nop(), fmt.Errorf("log_format %q: must be one of auto, console, json", format)
	}
	if format == "console" {
		out = zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly, NoColor: getenv("NO_COLOR") != "" || !tty}
	}
	return zerolog.New(out).Level(max(lvl, floor)).With().Timestamp().Logger(), nil
}

// isTerminal reports whether w is a file descriptor on a terminal.
func isTerminal(w io.Writer) bool {
	_, ok := ui.TerminalFd(w)
	return ok
}
