package main

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// A malarun killed outright (OOM, a node, a deploy) while it waits for a
// usage limit's reset: the next malarun of the issue continues the run,
// waits out what is left of the reset, resumes the session and succeeds
// (issue 40). On 3689d6a, as root with cgroup v2, every claude it started
// was SIGKILLed by the kernel before its first line (the run's group had
// been written cgroup.kill when it was opened again: docs/design.md §F31),
// and the run ended with exit 3 after three attempts in one second.
func TestKilledInALimitWaitResumes(t *testing.T) {
	t.Parallel()
	t.Run("as-it-runs", func(t *testing.T) {
		t.Parallel()
		killedInALimitWait(t, nil)
	})
	// The same where malarun may make no cgroup (a container's read-only
	// /sys/fs/cgroup): the subreaper and the marker hold the run.
	t.Run("no-cgroup", func(t *testing.T) {
		t.Parallel()
		mount := cgroup2Mount(t)
		if os.Geteuid() != 0 || mount == "" {
			t.Skip("SKIPPED: not root, or no cgroup2 mount: malarun makes no cgroup here, so as-it-runs is this case")
		}
		if _, err := exec.LookPath("unshare"); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal("unshare (util-linux) is missing")
			}
			t.Skip("!!! SKIPPING: unshare (util-linux) is missing !!!")
		}
		killedInALimitWait(t, func(cmd *exec.Cmd) {
			// A mount namespace of its own where the cgroup2 file system is
			// read-only, as in a container that does not delegate it.
			script := `mount -o remount,bind,ro "$0" && exec "$@"`
			args := append([]string{"--mount", "--propagation", "private", "sh", "-c", script, mount, cmd.Path}, cmd.Args[1:]...)
			cmd.Path, cmd.Args = "/usr/bin/unshare", append([]string{"unshare"}, args...)
		})
	})
}

func killedInALimitWait(t *testing.T, wrap func(*exec.Cmd)) {
	resets := time.Now().Add(4 * time.Second).Unix()
	p := newProc(t, "limit-killed", testchild.UsageLimited, []string{testchild.EnvResetsAt + "=" + strconv.FormatInt(resets, 10)},
		"--limit-wait", "1h", "--max-attempts", "3")
	next := p.again()
	if wrap != nil {
		wrap(p.cmd)
		wrap(next.cmd)
	}
	p.start(nil, nil)
	// The handshake: the record says the run waits for the reset.
	if !testchild.WaitUntil(exitLimit, nil, func() bool {
		e, ok := journal.Read(p.stateDir, p.issue)
		return ok && e.Err == nil && e.Record.Status == record.Waiting && !e.Record.RetryAt.IsZero()
	}) {
		t.Fatalf("the run never waited for the reset; stderr:\n%s", p.stderr.String())
	}
	contained := p.record().Cgroup != ""
	p.cmd.Process.Kill()
	p.cmd.Wait()

	code := next.run()
	rec := next.record()
	if code != 0 || rec.Status != record.Succeeded {
		t.Fatalf("the rerun: exit %d, record %s (%s), want 0 and succeeded; stderr:\n%s", code, rec.Status, rec.Reason, next.stderr.String())
	}
	if rec.Attempts != 2 || !next.transcriptHolds(2, `"type":"result","subtype":"success","is_error":false`) {
		t.Errorf("the rerun took %d attempts in all, want 2 (the limited one, then the resume)", rec.Attempts)
	}
	if strings.Contains(next.stderr.String(), "signal malarun did not send") {
		t.Errorf("a claude of the rerun was killed by someone else; stderr:\n%s", next.stderr.String())
	}
	if wrap != nil && contained {
		t.Errorf("the run had a cgroup on a read-only cgroup2 file system: %s", p.record().Cgroup)
	}
	assertNothingLeft(t, next)
}

// cgroup2Mount is where the cgroup2 file system holding this process's
// group is mounted ("" if none).
func cgroup2Mount(t *testing.T) string {
	t.Helper()
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if fields := strings.Fields(pre); ok && strings.HasPrefix(post, "cgroup2 ") && len(fields) >= 5 && fields[3] == "/" {
			return fields[4]
		}
	}
	return ""
}
