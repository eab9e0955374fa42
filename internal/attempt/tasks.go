package attempt

import (
	"github.com/malarun/malarun/internal/stream"
)

// terminalTaskStatus are the task_updated statuses after which a task does
// nothing more. task_notification ends a task whatever its status.
var terminalTaskStatus = map[string]bool{"completed": true, "failed": true, "killed": true, "stopped": true, "cancelled": true, "error": true}

// tasks tracks the CLI's background tasks (stream.Task) by task_id. The
// background_tasks_changed snapshot is authoritative, but an ended task is
// never brought back by a late snapshot: ends are idempotent.
type tasks struct {
	running []stream.Task   // in the order they started, at most maxTasks
	ended   map[string]bool // every task seen to end, at most maxTasks remembered
	// version counts the changes to running, so that what is made of it
	// (labels on the status line) is made again only when it changes.
	version int
}

// maxTasks bounds the background tasks followed at once: a stream that
// starts more gets no say for the rest (they are not waited for, and
// their lines are no one's progress).
const maxTasks = 256

// taskChange is what one line did to the set of running tasks.
type taskChange struct {
	started, finished []stream.Task
}

// observe folds one line into the set. commands are the inputs of the
// background tool calls so far, by tool_use id, to name what a task runs.
func (t *tasks) observe(ev *stream.Event, commands map[string]string) taskChange {
	var ch taskChange
	if ev.Type != "system" {
		return ch
	}
	switch ev.Subtype {
	case "background_tasks_changed":
		if !ev.HasTasks {
			return ch
		}
		present := map[string]bool{}
		for _, st := range ev.Tasks {
			present[st.ID] = true
			if st.ID == "" || t.ended[st.ID] {
				continue
			}
			if i := t.index(st.ID); i >= 0 {
				fill(&t.running[i], st.Type, st.Description)
				t.version++
				continue
			}
			nt := stream.Task{ID: st.ID, Type: st.Type, Description: st.Description}
			if t.start(nt) {
				ch.started = append(ch.started, nt)
			}
		}
		for i := 0; i < len(t.running); {
			if present[t.running[i].ID] {
				i++
				continue
			}
			ch.finished = append(ch.finished, t.end(i))
		}
	case "task_started":
		if ev.TaskID == "" || !ev.Backgrounded || t.ended[ev.TaskID] {
			// A foreground tool call also starts a task: it is a tool call
			// outstanding, which the idle and tool timers already cover.
			return ch
		}
		i := t.index(ev.TaskID)
		if i < 0 {
			if !t.start(stream.Task{ID: ev.TaskID}) {
				return ch
			}
			i = len(t.running) - 1
			ch.started = append(ch.started, t.running[i])
		}
		tk := &t.running[i]
		t.version++
		fill(tk, ev.TaskType, ev.Description)
		tk.ToolUseID = ev.ToolUseID
		tk.Command = commands[ev.ToolUseID]
		if len(ch.started) > 0 {
			ch.started[0] = *tk
		}
	case "task_notification", "task_updated":
		if ev.TaskID == "" || ev.Subtype == "task_updated" && !terminalTaskStatus[ev.Status] {
			return ch
		}
		if i := t.index(ev.TaskID); i >= 0 {
			if ev.OutputFile != "" {
				t.running[i].OutputFile = ev.OutputFile
			}
			ch.finished = append(ch.finished, t.end(i))
		} else {
			t.markEnded(ev.TaskID)
		}
	}
	return ch
}

// start adds a task that runs, unless maxTasks already do.
func (t *tasks) start(tk stream.Task) bool {
	if len(t.running) >= maxTasks {
		return false
	}
	t.running = append(t.running, tk)
	t.version++
	return true
}

// isRunning reports whether the task with this id runs.
func (t *tasks) isRunning(id string) bool { return id != "" && t.index(id) >= 0 }

func (t *tasks) index(id string) int {
	for i, tk := range t.running {
		if tk.ID == id {
			return i
		}
	}
	return -1
}

func (t *tasks) end(i int) stream.Task {
	t.version++
	tk := t.running[i]
	t.running = append(t.running[:i:i], t.running[i+1:]...)
	t.markEnded(tk.ID)
	return tk
}

func (t *tasks) markEnded(id string) {
	if t.ended == nil {
		t.ended = map[string]bool{}
	}
	if len(t.ended) >= maxTasks*4 {
		clear(t.ended) // a stream that ends tasks without end: forget the oldest
	}
	t.ended[id] = true
}

// fill gives tk the type and description it has not got yet.
func fill(tk *stream.Task, typ, desc string) {
	if tk.Type == "" {
		tk.Type = typ
	}
	if tk.Description == "" {
		tk.Description = desc
	}
}
