package replay

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/malarun/malarun/internal/event"
	"github.com/malarun/malarun/internal/ui"
)

// Words shared by the text and Markdown forms. Every string from an item
// is cleaned to one line here (ui.Clean); a renderer escapes it further for
// its medium.

// beganText says how an attempt began.
func beganText(began string) string {
	switch began {
	case BeganNew:
		return "new session"
	case BeganResume:
		return "resumed the session"
	case BeganFresh:
		return "fresh session, same prompt"
	case BeganCheckpoint:
		return "checkpoint request"
	case BeganContinuation:
		return "continuation from the checkpoint"
	case BeganFallback:
		return "fresh session from the task"
	case BeganReclaim:
		return "taken over from a malarun that stopped"
	}
	return "began how, not recorded"
}

// decision says one of malarun's decisions in words.
func decision(it *Item) string {
	ms := func(n int64) string { return ui.Duration(time.Duration(n) * time.Millisecond) }
	reason := ui.Clean(it.Reason, 300)
	switch it.Kind {
	case event.RunStarted:
		if it.Continued {
			return "run continued by a new malarun (the one before stopped)"
		}
		return "run started"
	case event.HangDetected:
		s := "hang: no output for " + ms(it.SilenceMS)
		if it.Doing != "" {
			s += ", " + ui.Clean(it.Doing, 120)
		} else if len(it.ToolsRunning) > 0 {
			s += ", while " + ui.Clean(strings.Join(it.ToolsRunning, ", "), 120) + " ran"
		}
		return s
	case event.KillSent:
		return fmt.Sprintf("stopping the process tree (%s): SIGTERM, SIGKILL after %s", ui.Clean(it.Reason, 60), ms(it.GraceMS))
	case event.TreeGone:
		return fmt.Sprintf("process tree gone: %d ended by SIGTERM, %d killed, in %s", it.Termed, it.Killed, ms(it.TookMS))
	case event.RetryDecided:
		s := "retry decision: " + ui.Clean(it.Action, 20)
		if it.BackoffMS > 0 {
			s += " after " + ms(it.BackoffMS)
		}
		if it.Action != "done" && reason != "" {
			s += " — " + reason
		}
		return s
	case event.LimitWait:
		s := "usage limit: waiting until " + it.Until.UTC().Format("2006-01-02 15:04:05 UTC")
		if !it.RetryAt.IsZero() {
			s += " (resets " + it.RetryAt.UTC().Format("15:04:05") + ")"
		}
		if it.LimitType != "" {
			s += ", " + ui.Clean(it.LimitType, 40)
		}
		return s
	case event.Checkpoint:
		return "context nearly full (" + ui.Occupancy(it.Occupancy, it.Window) + "): asking for a checkpoint"
	case event.Restart:
		return fmt.Sprintf("context restart %d (%s): a new session, %s", it.Continuation, ui.Clean(it.Action, 20), ui.Occupancy(it.Occupancy, it.Window))
	case event.APIRetry:
		return "claude retries an API request: " + reason + ", waiting " + ms(it.BackoffMS)
	case event.TaskStarted:
		return "background task " + ui.Clean(it.Task, 40) + " started: " + ui.Clean(it.Summary, 200)
	case event.TaskFinished:
		s := "background task " + ui.Clean(it.Task, 40) + " finished"
		if it.TookMS > 0 {
			s += " after " + ms(it.TookMS)
		}
		return s
	case event.RunFinished:
		s := "run finished: " + ui.Clean(it.Outcome, 60)
		if it.ExitCode != nil {
			s += fmt.Sprintf(" (exit %d)", *it.ExitCode)
		}
		return s + ", " + ui.Cost(it.RunCostUSD)
	}
	return ui.Clean(string(it.Kind), 40) + " " + reason
}

// lostWords says what of an attempt's requests and results was lost
// ("" when nothing): "2 requests never answered (3m2s lost)", "1 result
// line lost".
func lostWords(a *Attempt) string {
	var parts []string
	if n := a.NoResponse; n != nil && n.Retries > 0 {
		parts = append(parts, fmt.Sprintf("%s never answered (%s lost)", ui.Plural(n.Retries, "request"),
			ui.Duration(time.Duration(n.MS)*time.Millisecond)))
	}
	if a.ResultsLost > 0 {
		parts = append(parts, ui.Plural(a.ResultsLost, "result line")+" lost")
	}
	return strings.Join(parts, " · ")
}

// bytesText is a size for people: 84 B, 1.2 kB, 3.4 MB.
func bytesText(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	case n < 1_000_000_000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.1f GB", float64(n)/1e9)
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// visibleWidth is s's width in columns, the renderer's own SGR sequences
// (ESC [ ... m) counting none.
func visibleWidth(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if j := sgrEnd(s, i); j > i {
			i = j
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += ui.Width(string(r))
		i += size
	}
	return n
}

// sgrEnd is where an SGR sequence starting at i ends, or i if none does.
func sgrEnd(s string, i int) int {
	if !strings.HasPrefix(s[i:], "\x1b[") {
		return i
	}
	if k := strings.IndexByte(s[i:], 'm'); k > 0 {
		return i + k + 1
	}
	return i
}

// cutAt is the byte index where s is cut to fit in cols columns: at the
// last space that fits, else at the last rune that fits; never inside an
// SGR sequence or a rune.
func cutAt(s string, cols int) int {
	n, lastSpace, i := 0, -1, 0
	for i < len(s) {
		if j := sgrEnd(s, i); j > i {
			i = j
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		w := ui.Width(string(r))
		if n+w > cols {
			break
		}
		if r == ' ' {
			lastSpace = i
		}
		n += w
		i += size
	}
	if lastSpace > 0 && lastSpace > i/2 {
		return lastSpace
	}
	return max(i, 1)
}

// hookGist is a hook's end in words: "success, 10.0s", "error (exit 1)".
// It is outside text (the CLI's outcome): a renderer escapes it.
func hookGist(it *Item) string {
	s := ui.Clean(it.Outcome, 40)
	if s == "" {
		s = "ended"
	}
	if it.ExitCode != nil && *it.ExitCode != 0 {
		s += fmt.Sprintf(" (exit %d)", *it.ExitCode)
	}
	if it.TookMS > 0 {
		s += ", " + ui.Duration(time.Duration(it.TookMS)*time.Millisecond)
	}
	return s
}
