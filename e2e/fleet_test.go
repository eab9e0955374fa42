package e2e_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// The laptop recipe (deploy/xargs/malarun-fleet.sh): 20 issues, 4 at a
// time with xargs -P, against the fake CLI with a fault per issue, chosen
// by a claude wrapper from the issue's number: a clean run, a hung tool
// (malarun kills and resumes it within the run), a usage limit (exit 75:
// the recipe runs the issue again with --limit-wait and malarun sleeps
// until it resets), two crashes (exit 3 with --max-attempts 2: the recipe
// runs it again at once). Every issue must end in success (issue 34). A
// limit is the account's: issues that start while it holds stop with 75
// too, before their first attempt, and run again after it.
func TestLaptopFleetRecipe(t *testing.T) {
	onceAcrossCLIs(t) // the fake child, not the real CLI
	dir := t.TempDir()
	prompts, counts, out := filepath.Join(dir, "prompts"), filepath.Join(dir, "counts"), filepath.Join(dir, "out")
	for _, d := range []string{prompts, counts} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 20 {
		if err := os.WriteFile(filepath.Join(prompts, fmt.Sprintf("issue-%02d.md", i)), []byte(fmt.Sprintf("Fix issue %d.", i)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	hang := writeLines(t, testchild.InitLine, testchild.ToolLine)
	success, _ := filepath.Abs("../testdata/transcripts/tool-use-success.jsonl")
	recipe, _ := filepath.Abs("../deploy/xargs/malarun-fleet.sh")
	// The wrapper counts each issue's claude runs and picks its fault from
	// the issue's number (MALARUN_RUN is <issue>/<run id>).
	wrapper := filepath.Join(dir, "claude")
	script := `#!/bin/sh
issue=${MALARUN_RUN%%/*}
n=$(( $(cat "` + counts + `/$issue" 2>/dev/null || echo 0) + 1 ))
echo $n > "` + counts + `/$issue"
case $(( $(echo "$issue" | sed 's/^issue-0*//; s/^$/0/') % 4 )) in
0) export ` + testchild.EnvBehaviour + `=` + testchild.Replay + ` ` + testchild.EnvTranscript + `=` + success + ` ;;
1) export ` + testchild.EnvBehaviour + `=` + testchild.ResumeAware + ` ` + testchild.EnvLines + `=2 ` + testchild.EnvTranscript + `=` + hang + ` ;;
2) export ` + testchild.EnvBehaviour + `=` + testchild.UsageLimited + ` ` + testchild.EnvResetsAt + `=$(( $(date +%s) + 2 )) ;;
3) if [ $n -le 2 ]; then export ` + testchild.EnvBehaviour + `=` + testchild.CrashMidLine + ` ` + testchild.EnvLines + `=1
   else export ` + testchild.EnvBehaviour + `=` + testchild.Replay + ` ` + testchild.EnvTranscript + `=` + success + `; fi ;;
esac
exec "` + os.Args[0] + `" "$@"
`
	if err := os.WriteFile(wrapper, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	cmd := exec.Command("sh", recipe, prompts, "4", "--",
		"--claude-bin", wrapper, "--state-dir", state, "--tool-timeout", "1s", "--max-attempts", "2", "--backoff", "0s")
	cmd.Env = append(os.Environ(), "MALARUN="+e2e.malarun, "MALARUN_FLEET_OUT="+out, "MALARUN_FLEET_LIMIT_WAIT=1m")
	start := time.Now()
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("fleet: %v after %v\n%s", err, time.Since(start), b)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 20 {
		t.Fatalf("%d lines, want one per issue:\n%s", len(lines), b)
	}
	for i := range 20 {
		issue := fmt.Sprintf("issue-%02d", i)
		// At least the runs its own fault takes; more when another issue's
		// usage limit, shared by the account (§D10), stopped it first.
		least := map[int]int{0: 1, 1: 1, 2: 2, 3: 2}[i%4]
		m := regexp.MustCompile(regexp.QuoteMeta(issue) + `: succeeded \(run (\d+)\)`).FindStringSubmatch(string(b))
		if runs := 0; m == nil || func() bool { runs, _ = strconv.Atoi(m[1]); return runs < least }() {
			log, _ := os.ReadFile(filepath.Join(out, issue+".log"))
			t.Errorf("%s did not succeed after at least %d runs:\n%s\n%s's log:\n%s", issue, least, b, issue, lastLines(string(log), 12))
		}
		e, ok := journal.Read(state, issue)
		if !ok || e.Err != nil || e.Record.Status != record.Succeeded {
			t.Errorf("%s: record %+v", issue, e)
		}
	}
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}

// The recipe notes what it could not run where malarun summary reads it: a
// prompt file whose name is no issue id, and one malarun refused with
// exit 2 (an empty prompt); the morning's summary names both first. Run
// again with both fixed, the fleet clears its notes and the summary has
// nothing to act on.
func TestFleetRecipeNotesWhatItCouldNotRun(t *testing.T) {
	onceAcrossCLIs(t) // the fake child, not the real CLI
	dir := t.TempDir()
	prompts, out, state := filepath.Join(dir, "prompts"), filepath.Join(dir, "out"), filepath.Join(dir, "state")
	if err := os.MkdirAll(prompts, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(prompts, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("ok-1.md", "Fix it.")
	write("fix the login.md", "Fix the login.")
	write("empty-1.md", "")
	success, _ := filepath.Abs("../testdata/transcripts/tool-use-success.jsonl")
	wrapper := filepath.Join(dir, "claude")
	script := "#!/bin/sh\nexport " + testchild.EnvBehaviour + "=" + testchild.Replay + " " + testchild.EnvTranscript + "=" + success +
		"\nexec \"" + os.Args[0] + "\" \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	recipe, _ := filepath.Abs("../deploy/xargs/malarun-fleet.sh")
	fleet := func() string {
		cmd := exec.Command("sh", recipe, prompts, "2", "--", "--claude-bin", wrapper, "--state-dir", state)
		cmd.Env = append(os.Environ(), "MALARUN="+e2e.malarun, "MALARUN_FLEET_OUT="+out)
		b, _ := cmd.CombinedOutput() // exit 1 when a file did not run
		return string(b)
	}
	actOn := func() map[string][]string {
		b, err := exec.Command(e2e.malarun, "summary", "--state-dir", state, "--format", "json").Output()
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			ActOn []struct {
				Kind  string
				Files []string
			} `json:"act_on"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		got := map[string][]string{}
		for _, a := range s.ActOn {
			got[a.Kind] = a.Files
		}
		return got
	}
	lines := fleet()
	got := actOn()
	if want := map[string][]string{"not_run": {filepath.Join(prompts, "fix the login.md")}, "configuration": {filepath.Join(prompts, "empty-1.md")}}; !reflect.DeepEqual(got, want) {
		t.Errorf("the summary's things to act on: %q, want %q\nthe fleet said:\n%s", got, want, lines)
	}
	if err := os.Rename(filepath.Join(prompts, "fix the login.md"), filepath.Join(prompts, "login-1.md")); err != nil {
		t.Fatal(err)
	}
	write("empty-1.md", "Not empty now.")
	lines = fleet()
	if got := actOn(); len(got) != 0 {
		t.Errorf("after both were fixed, the summary still has %q to act on\nthe fleet said:\n%s", got, lines)
	}
}
