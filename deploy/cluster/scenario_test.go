package cluster_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// scenario is one run of the recipe in a namespace of its own: the Job,
// its ConfigMaps, claim and secret as in deploy/kubernetes/, a fake API
// per index.
type scenario struct {
	t    *testing.T
	ns   string
	apis []string // ANTHROPIC_BASE_URL per index
	dir  string   // the scenario's own folder: the repository, the fake APIs' logs
}

// the node's environment per pod, by namespace and index: the fake API's
// address and what a scenario adds (scenarioEnv).
var podEnvs sync.Map // "<ns>/<index>" -> []string

func scenarioEnv(pod *corev1.Pod) []string {
	v, _ := podEnvs.Load(pod.Namespace + "/" + pod.Annotations["batch.kubernetes.io/job-completion-index"])
	env, _ := v.([]string)
	return env
}

// newScenario applies the recipe in namespace ns with prompts (one per
// index; "" leaves an index's prompt out) and a fake API per index playing
// scripts[i] (fakeapi's steps), plus env for every pod's malarun. The
// secret malarun-anthropic holds an API key, or secret when it is given.
func newScenario(t *testing.T, ns string, secret map[string]string, prompts []string, scripts [][]string, env ...string) *scenario {
	t.Helper()
	ctx := context.Background()
	c := cluster.cp.client
	s := &scenario{t: t, ns: ns, dir: t.TempDir()}
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	waitFor(t, "the namespace's default service account", time.Minute, func() bool {
		_, err := c.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil
	})
	for i, script := range scripts {
		url := s.startAPI(i, script)
		s.apis = append(s.apis, url)
		podEnvs.Store(ns+"/"+strconv.Itoa(i), append([]string{"ANTHROPIC_BASE_URL=" + url, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}, env...))
		// The team's settings in each issue's CLI folder: Bash is allowed
		// (the agent runs the tests), as the image or a config step sets.
		claude := filepath.Join(cluster.node.root, ns, "pvc", "malarun-data", "issues", "issue-"+strconv.Itoa(i), "claude")
		if err := os.MkdirAll(claude, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(claude, "settings.json"), []byte(`{"permissions":{"allow":["Bash"]}}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	repo := s.makeRepository()
	if secret == nil {
		secret = map[string]string{"api-key": "sk-ant-cluster-test"}
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "malarun-anthropic"}, StringData: secret}
	if _, err := c.CoreV1().Secrets(ns).Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	strict := metav1.CreateOptions{FieldValidation: "Strict"}
	var config corev1.ConfigMap
	readRecipe(t, "config.yaml", &config)
	// What a team edits: its repository (here a local one) and its
	// collector (none here).
	config.Data["repository"] = repo
	delete(config.Data, "otlp-endpoint")
	if _, err := c.CoreV1().ConfigMaps(ns).Create(ctx, &config, strict); err != nil {
		t.Fatal(err)
	}
	var pr corev1.ConfigMap
	readRecipe(t, "prompts.yaml", &pr)
	pr.Data = map[string]string{}
	for i, p := range prompts {
		if p != "" {
			pr.Data[strconv.Itoa(i)+".md"] = p
		}
	}
	if _, err := c.CoreV1().ConfigMaps(ns).Create(ctx, &pr, strict); err != nil {
		t.Fatal(err)
	}
	var pvc corev1.PersistentVolumeClaim
	readRecipe(t, "pvc.yaml", &pvc)
	if _, err := c.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &pvc, strict); err != nil {
		t.Fatal(err)
	}
	var job batchv1.Job
	readRecipe(t, "job.yaml", &job)
	if int(*job.Spec.Completions) != len(prompts) {
		t.Fatalf("the recipe's Job has %d completions; the scenario gives %d prompts", *job.Spec.Completions, len(prompts))
	}
	if _, err := c.BatchV1().Jobs(ns).Create(ctx, &job, strict); err != nil {
		t.Fatal(err)
	}
	return s
}

// readRecipe decodes one file of deploy/kubernetes/, unchanged.
func readRecipe(t *testing.T, name string, into any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "kubernetes", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, into); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// startAPI runs a fake API playing script; it returns its address.
func (s *scenario) startAPI(i int, script []string) string {
	s.t.Helper()
	cmd := exec.Command(cluster.fakeapi, script...)
	log, err := os.Create(filepath.Join(s.dir, fmt.Sprintf("api-%d.log", i)))
	if err != nil {
		s.t.Fatal(err)
	}
	cmd.Stderr = log
	out, _ := cmd.StdoutPipe()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); log.Close() })
	url, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		s.t.Fatalf("fakeapi: %v", err)
	}
	return strings.TrimSpace(url)
}

// makeRepository makes the repository the init container clones.
func (s *scenario) makeRepository() string {
	s.t.Helper()
	src, bare := filepath.Join(s.dir, "src"), filepath.Join(s.dir, "repo.git")
	for _, args := range [][]string{
		{"init", "-q", "-b", "main", src},
		{"-C", src, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "start"},
		{"clone", "-q", "--bare", src, bare},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			s.t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return bare
}

// waitJob waits until the Job is Complete or Failed, and returns it.
func (s *scenario) waitJob(limit time.Duration) *batchv1.Job {
	s.t.Helper()
	var job *batchv1.Job
	waitFor(s.t, "the Job's end", limit, func() bool {
		j, err := cluster.cp.client.BatchV1().Jobs(s.ns).Get(context.Background(), "malarun", metav1.GetOptions{})
		if err != nil {
			return false
		}
		job = j
		for _, c := range j.Status.Conditions {
			if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
				return true
			}
		}
		return false
	})
	return job
}

// stateDir is the recipe's state_dir on the node's disk.
func (s *scenario) stateDir() string {
	return filepath.Join(cluster.node.root, s.ns, "pvc", "malarun-data", "state")
}

// record reads issue-i's record.
func (s *scenario) record(i int) map[string]any {
	s.t.Helper()
	b, err := os.ReadFile(filepath.Join(s.stateDir(), fmt.Sprintf("issue-%d", i), "record.json"))
	if err != nil {
		s.t.Fatalf("issue-%d: %v", i, err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		s.t.Fatal(err)
	}
	return m
}

// status is `malarun status --json` over the volume, as any pod sees it.
func (s *scenario) status() []map[string]any {
	s.t.Helper()
	out, err := exec.Command(cluster.malarun, "status", "--json", "--state-dir", s.stateDir()).Output()
	if err != nil {
		s.t.Fatalf("malarun status: %v\n%s", err, out)
	}
	var list []map[string]any
	if err := json.Unmarshal(out, &list); err != nil {
		s.t.Fatalf("status JSON: %v\n%s", err, out)
	}
	return list
}

// podCount counts the Job's pods that ended (the ones left; a finished
// Job keeps them).
func (s *scenario) pods() []corev1.Pod {
	list, err := cluster.cp.client.CoreV1().Pods(s.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	return list.Items
}

// podOf waits for a running pod of index i and returns its name.
func (s *scenario) runningPod(i int, limit time.Duration) string {
	s.t.Helper()
	name := ""
	waitFor(s.t, fmt.Sprintf("a running pod of index %d", i), limit, func() bool {
		for _, p := range s.pods() {
			if p.Annotations["batch.kubernetes.io/job-completion-index"] == strconv.Itoa(i) && p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				name = p.Name
				return true
			}
		}
		return false
	})
	return name
}

// log is what the pods of index i printed, in order.
func (s *scenario) log() string {
	var out []string
	files, _ := filepath.Glob(filepath.Join(cluster.node.root, s.ns, "*.log"))
	slices.Sort(files)
	for _, f := range files {
		b, _ := os.ReadFile(f)
		out = append(out, "== "+filepath.Base(f)+"\n"+string(b))
	}
	return strings.Join(out, "\n")
}

func waitFor(t *testing.T, what string, limit time.Duration, ok func() bool) {
	t.Helper()
	until := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(until) {
			t.Fatalf("no %s within %v", what, limit)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// statusAgrees checks that malarun status over the volume says what the
// Job says: the completed indexes succeeded, the failed ones failed.
func (s *scenario) statusAgrees(job *batchv1.Job) {
	s.t.Helper()
	completed, failed := indexes(job.Status.CompletedIndexes), map[int]bool{}
	if job.Status.FailedIndexes != nil {
		failed = indexes(*job.Status.FailedIndexes)
	}
	for _, e := range s.status() {
		issue, _ := e["issue"].(string)
		i, err := strconv.Atoi(strings.TrimPrefix(issue, "issue-"))
		if err != nil {
			s.t.Errorf("status lists %q", issue)
			continue
		}
		st, _ := e["status"].(string)
		switch {
		case completed[i] && st != "succeeded", failed[i] && st != "failed", !completed[i] && !failed[i]:
			s.t.Errorf("%s is %s in malarun status; the Job has completed %q, failed %v", issue, st, job.Status.CompletedIndexes, job.Status.FailedIndexes)
		}
	}
}

// indexes reads a Job's index list ("0,2-4").
func indexes(list string) map[int]bool {
	out := map[int]bool{}
	for part := range strings.SplitSeq(list, ",") {
		if part == "" {
			continue
		}
		lo, hi, ok := strings.Cut(part, "-")
		a, _ := strconv.Atoi(lo)
		b := a
		if ok {
			b, _ = strconv.Atoi(hi)
		}
		for i := a; i <= b; i++ {
			out[i] = true
		}
	}
	return out
}

// waitRunningTool waits until issue-i's record has a Bash call running
// whose input holds cmd: the tool is running now.
func (s *scenario) waitRunningTool(i int, cmd string) {
	s.t.Helper()
	waitFor(s.t, "issue-"+strconv.Itoa(i)+"'s running "+cmd, 2*time.Minute, func() bool {
		b, err := os.ReadFile(filepath.Join(s.stateDir(), fmt.Sprintf("issue-%d", i), "record.json"))
		var rec struct {
			Status  string
			Running []struct{ Name, Input string }
		}
		if err != nil || json.Unmarshal(b, &rec) != nil {
			return false
		}
		if rec.Status != "processing" {
			s.t.Fatalf("issue-%d is %s before its tool ran:\n%s", i, rec.Status, s.log())
		}
		for _, c := range rec.Running {
			if c.Name == "Bash" && strings.Contains(c.Input, cmd) {
				return true
			}
		}
		return false
	})
}
