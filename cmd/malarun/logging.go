package main

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/malarun/malarun/internal/event"

	"github.com/rs/zerolog"

	"github.com/malarun/malarun/internal/ui"
)

// newLogger writes to w (stderr, or the status line's terminal writer):
// human-readable when tty (stderr is a terminal), JSON lines otherwise (CI
// logs, files), unless log_format says which. floor raises the level: the
// status line replaces info logs, --quiet keeps only errors. lines: w also
// shows the run's event lines, so the records an event reports are left
// out (see withoutEvented).
func newLogger(w io.Writer, tty bool, format, level string, floor zerolog.Level, lines bool, getenv func(string) string) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil {
		return zerolog.Nop(), fmt.Errorf("log_level %q: %w", level, err)
	}
	// JSON lines, unless console: a CI log is read by people, and zerolog
	// writes each event in one Write, so no rune is split.
	out := ui.InertJSONWriter(w)
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
		out = zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly, NoColor: getenv("NO_COLOR") != "" || !tty,
			FormatPrepare: inertLogEvent}
	}
	if lines {
		out = withoutEvented{out}
	}
	return zerolog.New(withoutEmptyFields{out}).Level(max(lvl, floor)).With().Timestamp().Logger(), nil
}

// withoutEvented leaves out the log records that an event also reports:
// on a terminal the event's line says it (a hang, claude retrying an API
// request, a usage-limit wait, the cause of a stop that the attempt's end
// gives), and each fact is printed once (docs/design.md §D15). Everywhere
// else (JSON logs in CI, a file, a pipe, GitHub Actions, TERM=dumb) there
// are no event lines and the records stay.
//
// A record is recognised by the field the supervisor adds to it
// (event.AlsoField), not by its message: a message is worded for
// people and may change, the field is the supervisor's statement that an
// event says the same, made where it emits both, and JSON logs keep it to
// join a record to its --events line. The supervisor only marks; whether
// an output leaves such records out is decided here, by the output that
// draws the event lines. A zerolog hook cannot see a record's fields, so
// this is a writer: zerolog writes each record as one JSON object in one
// Write, before the console writer formats it.
type withoutEvented struct{ next io.Writer }

func (w withoutEvented) Write(p []byte) (int, error) {
	var rec map[string]json.RawMessage
	if json.Unmarshal(p, &rec) == nil {
		if _, ok := rec[event.AlsoField]; ok {
			return len(p), nil
		}
	}
	return w.next.Write(p)
}

// inertLogEvent makes a decoded log event safe for the console writer,
// which prints it for a person, usually on a terminal. Field values can
// hold anything the model or the CLI wrote. The ConsoleWriter quotes a
// string value with control characters (strconv.Quote), but prints the
// message as it is, and arrays and objects as json.Marshal writes them,
// which leaves C1 and bidirectional controls raw. So every string in the
// event goes through ui.Inert first (a '\n' kept there is quoted or
// JSON-escaped after), and the message through ui.Clean: one line.
func inertLogEvent(evt map[string]any) error {
	for k, v := range evt {
		if k == zerolog.MessageFieldName {
			if s, ok := v.(string); ok {
				evt[k] = ui.Clean(s, 0)
				continue
			}
		}
		evt[k] = inertLogValue(v)
	}
	return nil
}

// inertLogValue is v with every string in it made inert; json.Number,
// bool and nil are left as they are.
func inertLogValue(v any) any {
	switch v := v.(type) {
	case string:
		return ui.Inert(v)
	case []any:
		for i, e := range v {
			v[i] = inertLogValue(e)
		}
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[ui.Inert(k)] = inertLogValue(e)
		}
		return out
	}
	return v
}

// isTerminal reports whether w is a file descriptor on a terminal.
func isTerminal(w io.Writer) bool {
	_, ok := ui.TerminalFd(w)
	return ok
}
