package attempt

import (
	"github.com/malarun/malarun/internal/stream"
)

// Task is a background task of the CLI (a Bash command run with
// run_in_background, a background agent, a Monitor watch).
type Task struct {
	ID          string `json:"id"`
	Type        string `json:"type,omitempty"` // local_bash, local_agent, ...
	Description string `json:"description,omitempty"`
	// Command is the input of the tool call that started it, when known
	// (cut short like every tool input malarun keeps).
	Command   string `json:"command,omitempty"`
	ToolUseID string `json:"tool_use_id,omitempty"`
	// OutputFile is where the CLI writes the task's output.
	OutputFile string `json:"output_file,omitempty"`
}

// terminalTaskStatus are the task_updated statuses after which a task does
// nothing more. task_notification ends a task whatever its status.
var terminalTaskStatus = map[string]bool{"completed": true, "failed": true, "killed": true, "stopped": true, "cancelled": true, "error": true}

// tasks tracks the CLI's background tasks by task_id. The
// background_tasks_changed snapshot is authoritative, but an ended task is
// never brought back by a late snapshot: ends are idempotent.
type tasks struct {
	running []Task          // in the order they started
	ended   map[string]bool // every task seen to end
}

// taskChange is what one line did to the set of running tasks.
type taskChange struct {
	started, finished []Task
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
				t.running[i].fill(st.Type, st.Description)
				continue
			}
			nt := Task{ID: st.ID, Type: st.Type, Description: st.Description}
			t.running = append(t.running, nt)
			ch.started = append(ch.started, nt)
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
			t.running = append(t.running, Task{ID: ev.TaskID})
			i = len(t.running) - 1
			ch.started = append(ch.started, t.running[i])
		}
		tk := &t.running[i]
		tk.fill(ev.TaskType, ev.Description)
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

func (t *tasks) index(id string) int {
	for i, tk := range t.running {
		if tk.ID == id {
			return i
		}
	}
	return -1
}

func (t *tasks) end(i int) Task {
	tk := t.running[i]
	t.running = append(t.running[:i:i], t.running[i+1:]...)
	t.markEnded(tk.ID)
	return tk
}

func (t *tasks) markEnded(id string) {
	if t.ended == nil {
		t.ended = map[string]bool{}
	}
	t.ended[id] = true
}

func (tk *Task) fill(typ, desc string) {
	if tk.Type == "" {
		tk.Type = typ
	}
	if tk.Description == "" {
		tk.Description = desc
	}
}
