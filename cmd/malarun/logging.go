package main

import (
	"fmt"
	"io"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"
)

// newLogger writes to w (stderr): human-readable on a terminal, JSON lines
// otherwise (CI logs, files), unless log_format says which.
func newLogger(w io.Writer, format, level string, getenv func(string) string) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil {
		return zerolog.Nop(), fmt.Errorf("log_level %q: %w", level, err)
	}
	out := w
	switch format {
	case "console":
	case "json":
	case "auto":
		if isTerminal(w) {
			format = "console"
		}
	default:
		return zerolog.Nop(), fmt.Errorf("log_format %q: must be one of auto, console, json", format)
	}
	if format == "console" {
		out = zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly, NoColor: getenv("NO_COLOR") != "" || !isTerminal(w)}
	}
	return zerolog.New(out).Level(lvl).With().Timestamp().Logger(), nil
}

// isTerminal reports whether w is a file descriptor on a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
