package cluster_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// Every index succeeds: the Job completes, each record says succeeded, and
// malarun status over the volume agrees.
func TestEveryIndexSucceeds(t *testing.T) {
	t.Parallel()
	s := newScenario(t, "all-succeed", nil, []string{"Task zero.", "Task one.", "Task two."},
		[][]string{{"text:done zero"}, {"text:done one"}, {"text:done two"}})
	job := s.waitJob(3 * time.Minute)
	if job.Status.CompletedIndexes != "0-2" || job.Status.FailedIndexes != nil && *job.Status.FailedIndexes != "" || job.Status.Failed != 0 {
		t.Fatalf("job status %+v\n%s", job.Status, s.log())
	}
	for i := range 3 {
		if r := s.record(i); r["status"] != "succeeded" || r["attempts"] != float64(1) {
			t.Errorf("issue-%d: %v %v", i, r["status"], r["attempts"])
		}
	}
	s.statusAgrees(job)
}

// A bad prompt (index 1's is missing from the prompts ConfigMap): malarun
// exits 2, the recipe fails that index at once (FailIndex) and the others
// finish; the Job ends Failed with index 1 failed.
func TestBadPromptFailsItsIndexOnly(t *testing.T) {
	t.Parallel()
	s := newScenario(t, "bad-prompt", nil, []string{"Task zero.", "", "Task two."},
		[][]string{{"text:done zero"}, {"text:never asked"}, {"text:done two"}})
	job := s.waitJob(3 * time.Minute)
	if job.Status.CompletedIndexes != "0,2" || job.Status.FailedIndexes == nil || *job.Status.FailedIndexes != "1" {
		t.Fatalf("job status %+v\n%s", job.Status, s.log())
	}
	if !jobHas(job, "Failed") {
		t.Errorf("job conditions %+v", job.Status.Conditions)
	}
	if code := exitCodes(s, 1); !slices.Equal(code, []int32{2}) {
		t.Errorf("index 1's pods exited %v, want one exit 2", code)
	}
	s.statusAgrees(job)
}

// A stall and a 529 inside one pod: after a tool call, the API stalls
// mid-answer; malarun kills the silent CLI and resumes the session, whose
// next request meets a 529 that the CLI retries itself; one pod, Complete.
func TestStallAnd529RescuedInsideOnePod(t *testing.T) {
	t.Parallel()
	s := newScenario(t, "stall-529", nil, []string{"Task zero.", "Task one.", "Task two."},
		[][]string{{"bash:echo talked", "stall", "error:529", "text:done after a stall"}, {"text:done one"}, {"text:done two"}},
		"MALARUN_IDLE_TIMEOUT=5s")
	job := s.waitJob(4 * time.Minute)
	if job.Status.CompletedIndexes != "0-2" || job.Status.Failed != 0 {
		t.Fatalf("job status %+v\n%s", job.Status, s.log())
	}
	r := s.record(0)
	if r["status"] != "succeeded" || r["attempts"] != float64(2) || len(r["sessions"].([]any)) != 1 {
		t.Errorf("issue-0: status %v, attempts %v, sessions %v\n%s", r["status"], r["attempts"], r["sessions"], s.log())
	}
	s.statusAgrees(job)
}

// An eviction while a tool runs: the pod gets SIGTERM, malarun records the
// run interrupted and exits 143; the recipe ignores the disruption (not
// counted), and the replacement pod resumes the session, naming the call
// that was cut off.
func TestEvictionMidToolIsResumedUncounted(t *testing.T) {
	t.Parallel()
	s := newScenario(t, "eviction", nil, []string{"Task zero.", "Task one.", "Task two."},
		[][]string{{"bash:echo cut && sleep 117", "text:done after the eviction"}, {"text:done one"}, {"text:done two"}})
	pod := s.runningPod(0, 2*time.Minute)
	s.waitRunningTool(0, "sleep 117")
	if err := cluster.node.evict(context.Background(), s.ns, pod); err != nil {
		t.Fatal(err)
	}
	job := s.waitJob(4 * time.Minute)
	if job.Status.CompletedIndexes != "0-2" || job.Status.Failed != 0 {
		t.Fatalf("job status %+v (the eviction must not count)\n%s", job.Status, s.log())
	}
	r := s.record(0)
	if r["status"] != "succeeded" || len(r["sessions"].([]any)) != 1 || r["run_reclaims"] != float64(0) {
		t.Errorf("issue-0: %v", r)
	}
	// run_dir is the path in the pod: /state is the volume's state folder.
	runDir := filepath.Join(s.stateDir(), strings.TrimPrefix(r["run_dir"].(string), "/state"))
	prompt, _ := os.ReadFile(filepath.Join(runDir, "attempt-2.prompt.md"))
	if !strings.Contains(string(prompt), "sleep 117") {
		t.Errorf("the resume prompt does not name the cut-off call:\n%s\n%s", prompt, s.log())
	}
	if !slices.Contains(exitCodes(s, 0), 143) {
		t.Errorf("no pod of index 0 exited 143: %v", exitCodes(s, 0))
	}
	s.statusAgrees(job)
	assertNoProcess(t, "sleep", "117")
}

// A lost node: the pod's malarun is SIGKILLed with everything in its group
// and the node is gone (no status is ever written). The pod garbage
// collector fails the pod as disrupted, the Job starts a replacement on the
// node that is left, and its malarun reclaims the run (ends what the dead
// one left, the tool's process included) and resumes it.
func TestLostNodeIsReclaimed(t *testing.T) {
	t.Parallel()
	// Its pods go to a node of their own, which it loses.
	lost := cluster.node.node + "-lost"
	if err := registerNode(context.Background(), cluster.node, lost); err != nil {
		t.Fatal(err)
	}
	cluster.node.mu.Lock()
	cluster.node.nodeOf["lost-node"] = lost
	cluster.node.mu.Unlock()
	s := newScenario(t, "lost-node", nil, []string{"Task zero.", "Task one.", "Task two."},
		[][]string{{"bash:echo lost && sleep 118", "text:done after the reclaim"}, {"text:done one"}, {"text:done two"}})
	pod := s.runningPod(0, 2*time.Minute)
	s.waitRunningTool(0, "sleep 118")
	if err := cluster.node.lose(context.Background(), s.ns, pod); err != nil {
		t.Fatal(err)
	}
	job := s.waitJob(4 * time.Minute)
	if job.Status.CompletedIndexes != "0-2" {
		t.Fatalf("job status %+v\n%s", job.Status, s.log())
	}
	r := s.record(0)
	if r["status"] != "succeeded" || r["run_reclaims"] != float64(1) || len(r["sessions"].([]any)) != 1 {
		t.Errorf("issue-0: status %v, run_reclaims %v, sessions %v\n%s", r["status"], r["run_reclaims"], r["sessions"], s.log())
	}
	s.statusAgrees(job)
	assertNoProcess(t, "sleep", "118")
}

func jobHas(job *batchv1.Job, cond batchv1.JobConditionType) bool {
	for _, c := range job.Status.Conditions {
		if c.Type == cond && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// exitCodes are the exit codes the node reported for index i's pods, in
// order (a deleted pod's included).
func exitCodes(s *scenario, i int) []int32 {
	cluster.node.mu.Lock()
	defer cluster.node.mu.Unlock()
	var out []int32
	for _, e := range cluster.node.ends {
		if e.namespace == s.ns && e.index == strconv.Itoa(i) {
			out = append(out, int32(e.code))
		}
	}
	return out
}

// assertNoProcess fails if a process runs the command line argv.
func assertNoProcess(t *testing.T, argv ...string) {
	t.Helper()
	want := strings.Join(argv, "\x00") + "\x00"
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err == nil && string(b) == want {
			t.Errorf("left running: pid %s, %q", d.Name(), argv)
		}
	}
}

// A usage limit: the account's subscription is refused with a usage limit
// after the first tool call; malarun exits 75, the recipe counts it and the
// index gets a replacement pod (after the Job's 10 s backoff), whose
// malarun resumes the recorded session once the limit has reset. The limit
// is the account's, and every index runs on the one Secret: an index whose
// malarun starts while another's limit holds stops with 75 too, before its
// first attempt (malarun's shared usage-limit note), and runs after it.
func TestUsageLimitGetsAReplacementThatResumes(t *testing.T) {
	t.Parallel()
	// A subscription's token (an API key's 429s the CLI retries itself);
	// the limit resets 12 s after the fake API starts, past limit_wait
	// (1 s here, 5 h in the recipe's config), so the pod exits 75 rather
	// than wait it out.
	limited := []string{"bash:echo before the limit", "limit:12", "text:done after the limit"}
	s := newScenario(t, "usage-limit", map[string]string{"oauth-token": "sk-ant-oat01-cluster-test"}, []string{"Task zero.", "Task one.", "Task two."},
		[][]string{limited, limited, limited}, "MALARUN_LIMIT_WAIT=1s")
	job := s.waitJob(4 * time.Minute)
	if job.Status.CompletedIndexes != "0-2" {
		t.Fatalf("job status %+v\n%s", job.Status, s.log())
	}
	limits := 0
	for i := range 3 {
		// A pod that meets the limit when its reset is less than
		// limit_wait away (its fake API started long before) waits it out
		// itself: no 75 for that index.
		codes := exitCodes(s, i)
		n := len(codes)
		if n < 1 || codes[n-1] != 0 || slices.ContainsFunc(codes[:n-1], func(c int32) bool { return c != 75 }) {
			t.Errorf("index %d's pods exited %v, want 75s then 0\n%s", i, codes, s.log())
		}
		limits += n - 1
		r := s.record(i)
		if r["status"] != "succeeded" || len(r["sessions"].([]any)) != 1 {
			t.Errorf("issue-%d: status %v, sessions %v", i, r["status"], r["sessions"])
		}
	}
	if limits == 0 {
		t.Errorf("no pod exited 75: nothing was replaced\n%s", s.log())
	}
	if int(job.Status.Failed) != limits {
		t.Errorf("the Job counted %d failed pods; the indexes exited 75 %d times (each is counted)", job.Status.Failed, limits)
	}
	s.statusAgrees(job)
}
