package record_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/stream"
	"github.com/malarun/malarun/internal/testing/recordtest"
)

// What malarun writes at the edges of what it checks reads back as
// written: every phase that grows at attempt.MaxRoom, the calls and tasks
// in flight at the cap with the rest counted, fields as long as the
// stream keeps them, a poisoned run, its last output failures.
func TestRecordsAtTheBoundsRead(t *testing.T) {
	r := recordtest.Sample()
	r.PhaseRoom = map[string]int{}
	for _, p := range attempt.Phases() {
		if p.Grows() {
			r.PhaseRoom[p.String()] = attempt.MaxRoom
		}
	}
	r.Running, r.RunningMore = recordtest.Calls(record.MaxInFlight), 19_968
	r.Running[0] = stream.ToolUse{Name: strings.Repeat("n", stream.MaxShortBytes), Input: strings.Repeat("é", stream.MaxInputBytes/2)}
	for i := range record.MaxInFlight {
		r.Tasks = append(r.Tasks, stream.Task{ID: fmt.Sprint("b", i), Description: strings.Repeat("d", stream.MaxInputBytes), Command: "x"})
	}
	r.TasksMore = 1
	r.SideEffects = map[string]int{"Bash": 1, "mcp__github__create_issue": 3}
	r.MCPNotConnected = []stream.MCPServer{{Name: "github", Status: "failed"}, {Name: "linear", Status: "needs-auth"}}
	for range record.MaxOutputFailures {
		r.OutputFailures = append(r.OutputFailures, record.OutputFailure{Output: "events", Error: "EPIPE"})
	}
	r.Poisoned, r.Status, r.ExitCode = true, record.Failed, 6
	got, err := record.Decode(recordtest.Encoded(t, r))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(r)
	b, _ := json.Marshal(got)
	if string(a) != strings.Replace(string(b), fmt.Sprintf(`"version":%d`, record.Version), `"version":0`, 1) {
		t.Errorf("read back as\n%s\nwritten\n%s", b, a)
	}
}

// A record of version 8 or before kept every call and task in flight: it
// reads with the first MaxInFlight named and the rest counted, as this
// malarun writes them. It cannot hold version 9's counts; a version 6
// record cannot hold version 7's cgroup or attempt start.
func TestOlderRecordsReadInFlightCapped(t *testing.T) {
	old := func(edit func(m map[string]any), version int) []byte {
		t.Helper()
		var m map[string]any
		if err := json.Unmarshal(recordtest.Encoded(t, recordtest.Sample()), &m); err != nil {
			t.Fatal(err)
		}
		m["version"] = version
		edit(m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	many := func(m map[string]any) {
		m["running"] = recordtest.Calls(record.MaxInFlight + 8)
		var tasks []stream.Task
		for i := range record.MaxInFlight + 3 {
			tasks = append(tasks, stream.Task{ID: fmt.Sprint("b", i)})
		}
		m["tasks"] = tasks
	}
	r, err := record.Decode(old(many, 8))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Running) != record.MaxInFlight || r.RunningMore != 8 || r.Running[0].Input != `{"command":"sleep 0"}` ||
		len(r.Tasks) != record.MaxInFlight || r.TasksMore != 3 || r.Tasks[record.MaxInFlight-1].ID != fmt.Sprint("b", record.MaxInFlight-1) {
		t.Errorf("a version 8 record with %d calls and %d tasks reads as %d calls + %d, %d tasks + %d",
			record.MaxInFlight+8, record.MaxInFlight+3, len(r.Running), r.RunningMore, len(r.Tasks), r.TasksMore)
	}
	if _, err := record.Encode(r); err != nil {
		t.Errorf("it cannot be saved again: %v", err)
	}
	for name, c := range map[string]struct {
		edit    func(map[string]any)
		version int
		want    string
	}{
		"running_more in version 8":       {func(m map[string]any) { m["running"], m["running_more"] = recordtest.Calls(record.MaxInFlight), 1 }, 8, "version 9 added"},
		"tasks_more in version 8":         {func(m map[string]any) { m["tasks_more"] = 2 }, 8, "version 9 added"},
		"cgroup in version 6":             {func(m map[string]any) { m["cgroup"] = "/sys/fs/cgroup/malarun/x" }, 6, "version 7 added"},
		"attempt_started_at in version 6": {func(m map[string]any) { m["attempt_started_at"] = "2026-11-23T12:00:00Z" }, 6, "version 7 added"},
	} {
		if _, err := record.Decode(old(c.edit, c.version)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", name, err, c.want)
		}
	}
}

func TestNamed(t *testing.T) {
	for _, c := range []struct{ n, more, wantN, wantMore int }{
		{0, 0, 0, 0}, {1, 0, 1, 0}, {record.MaxInFlight, 0, record.MaxInFlight, 0}, {record.MaxInFlight + 1, 0, record.MaxInFlight, 1},
		{20_000, 0, record.MaxInFlight, 20_000 - record.MaxInFlight}, {record.MaxInFlight + 2, 5, record.MaxInFlight, 7},
	} {
		items := make([]int, c.n)
		for i := range items {
			items[i] = i
		}
		got, more := record.Named(items, c.more)
		if len(got) != c.wantN || more != c.wantMore || c.n > 0 && got[0] != 0 {
			t.Errorf("Named(%d items, %d) = %d items, %d more", c.n, c.more, len(got), more)
		}
		if len(got) == record.MaxInFlight && cap(got) != record.MaxInFlight {
			t.Errorf("Named(%d items) leaves room to append into the list it cut", c.n)
		}
	}
}
