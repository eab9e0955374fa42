package record

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/stream"
)

// The checks of the values a record takes from the run and the CLI's
// stream (docs/design.md §D37): each is what malarun writes there, and a
// value it never writes makes the record damaged, even one that looks
// harmless, since a later malarun acts on it (a room it would give a
// phase, a call it would name in a prompt).

// MaxInFlight bounds the tool calls and the background tasks a record
// names (Running, Tasks), and a resume prompt: the first MaxInFlight, the
// rest counted (RunningMore, TasksMore). A CLI with thousands of calls
// open would otherwise make every save, and every line that saves,
// cost as much as all of them.
const MaxInFlight = 32

// Named is what a record (and a resume prompt) keeps of a list in flight:
// its first MaxInFlight items, and how many more there are (more, plus
// those cut here).
func Named[T any](items []T, more int) ([]T, int) {
	if len(items) <= MaxInFlight {
		return items, more
	}
	return items[:MaxInFlight:MaxInFlight], more + len(items) - MaxInFlight
}

// MaxOutputFailures bounds the output failures a record keeps: one per
// output per invocation, the latest.
const MaxOutputFailures = 16

// checkRoom: phase_room names phases whose allowance grows (attempt.Phase
// Grows), each doubled 1 to attempt.MaxRoom times. A name malarun does not
// know, a phase that never grows (text, tool) or a count above MaxRoom was
// not written by this malarun; a malarun that grows another phase writes
// a newer record version, which this one refuses.
func checkRoom(room map[string]int, bad func(string, ...any)) {
	for name, n := range room {
		p, known := phaseNamed(name)
		switch {
		case !known:
			bad("phase_room names %q, not a phase of the stream", name)
		case !p.Grows():
			bad("phase_room gives the phase %s room, but its allowance never grows", name)
		case n < 1 || n > attempt.MaxRoom:
			bad("phase_room of %s is %d, malarun doubles an allowance 1 to %d times", name, n, attempt.MaxRoom)
		}
	}
}

func phaseNamed(name string) (attempt.Phase, bool) {
	for _, p := range attempt.Phases() {
		if p.String() == name {
			return p, true
		}
	}
	return 0, false
}

// checkSideEffects: counts of calls, so 1 or more (a tool that never ran
// has no entry), by a tool name as the stream keeps one.
func checkSideEffects(calls map[string]int, bad func(string, ...any)) {
	for tool, n := range calls {
		if n < 1 || n > maxCount || len(tool) > stream.MaxShortBytes {
			bad("side_effects of %.40q is %d", tool, n)
		}
	}
}

// checkInFlight: the calls and tasks in flight are the first MaxInFlight
// (the rest counted, and counted only when the list is full), each field
// within what the stream keeps of it, so a planted record cannot make a
// resume prompt name megabytes.
func checkInFlight(r Record, bad func(string, ...any)) {
	checkNamed("running", len(r.Running), r.RunningMore, bad)
	checkNamed("tasks", len(r.Tasks), r.TasksMore, bad)
	for _, c := range r.Running {
		if len(c.Name) > stream.MaxShortBytes || len(c.Input) > stream.MaxInputBytes {
			bad("running holds a call of %d and %d bytes, malarun keeps at most %d and %d", len(c.Name), len(c.Input), stream.MaxShortBytes, stream.MaxInputBytes)
		}
	}
	for _, tk := range r.Tasks {
		short := max(len(tk.ID), len(tk.Type), len(tk.ToolUseID), len(tk.OutputFile))
		if tk.ID == "" || short > stream.MaxShortBytes || len(tk.Description) > stream.MaxInputBytes || len(tk.Command) > stream.MaxInputBytes {
			bad("tasks holds a task malarun does not keep (id %.40q)", tk.ID)
		}
	}
}

func checkNamed(name string, n, more int, bad func(string, ...any)) {
	if n > MaxInFlight {
		bad("%s holds %d, malarun names at most %d", name, n, MaxInFlight)
	}
	if more < 0 || more > maxCount || more > 0 && n < MaxInFlight {
		bad("%s_more is %d with %d named", name, more, n)
	}
}

// checkMCP: the servers the CLI listed as not connected, as its init line
// gives them (at most stream.MaxListItems).
func checkMCP(servers []stream.MCPServer, bad func(string, ...any)) {
	if len(servers) > stream.MaxListItems {
		bad("mcp_servers_not_connected holds %d servers, an init line lists at most %d", len(servers), stream.MaxListItems)
	}
	for _, s := range servers {
		if s.Status == "connected" || len(s.Name) > stream.MaxShortBytes || len(s.Status) > stream.MaxShortBytes {
			bad("mcp_servers_not_connected holds %.40q with status %.40q", s.Name, s.Status)
		}
	}
}

// checkOutputFailures: malarun's own outputs, the latest MaxOutputFailures.
func checkOutputFailures(failures []OutputFailure, bad func(string, ...any)) {
	if len(failures) > MaxOutputFailures {
		bad("output_failures holds %d, malarun keeps at most %d", len(failures), MaxOutputFailures)
	}
	for _, f := range failures {
		if f.Output != "stderr" && f.Output != "events" {
			bad("output_failures names the output %q", f.Output)
		}
	}
}

// maxIssueIDLen bounds an issue id: it names a folder.
const maxIssueIDLen = 128

// CheckIssueName accepts what can name an issue's folder: letters,
// digits, '.', '_' and '-', at most maxIssueIDLen long, and not "." or
// "..": the id becomes a path component, so anything else could escape
// the state directory. A record's issue is held to it too. (A new issue
// is held to more: supervisor.ValidateIssueID.)
func CheckIssueName(id string) error {
	if id == "" {
		return fmt.Errorf("the issue id is empty")
	}
	if len(id) > maxIssueIDLen {
		return fmt.Errorf("issue id %.20q... is %d characters long; at most %d are allowed", id, len(id), maxIssueIDLen)
	}
	if id == "." || id == ".." {
		return fmt.Errorf("issue id %q is not allowed: it names a directory", id)
	}
	if i := strings.IndexFunc(id, func(r rune) bool {
		return !(r == '.' || r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9'))
	}); i >= 0 {
		r, _ := utf8.DecodeRuneInString(id[i:])
		return fmt.Errorf("issue id %q has %q at position %d: only letters, digits, '.', '_' and '-' are allowed", id, r, i+1)
	}
	return nil
}
