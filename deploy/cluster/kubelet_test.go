package cluster_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// standIn plays the kubelet of one node: it binds every pod nobody bound,
// runs each container's command as a local process (the real malarun, the
// real CLI), in a mount namespace of its own where the pod's volumes are
// bind-mounted at their mount paths (a PersistentVolumeClaim is a folder
// per claim, a ConfigMap a folder of its keys), and writes the exit code
// back as the pod's status. It ignores what a node would enforce
// (securityContext, resources, images): the processes run as root.
type standIn struct {
	client *kubernetes.Clientset
	node   string // the node's name; it also plays the nodes named node-<x> (lose)
	root   string // the node's disk: <root>/<namespace>/pvc/<claim>, <root>/<namespace>/pods/<uid>/<volume>
	// claude is the folder of the pinned CLI's package: mounted at
	// /opt/malarun-cluster-test/claude in every pod (the image's copy).
	claude string
	// bin holds malarun and claude (a link into the package), on the
	// pods' PATH; it must not be under a folder a pod mounts over.
	bin string
	// env adds the node's environment for a pod (the fake API's address).
	env func(pod *corev1.Pod) []string

	mu   sync.Mutex
	pods map[types.UID]*podRun
	// nodeOf binds a namespace's pods to another node it plays (one that
	// a scenario loses); the others go to node.
	nodeOf map[string]string
	ends   []podEnd // every exit code written as a pod's status, in order
	logs   []string // what went wrong in the loop, for the test to report
}

// podEnd is one pod's end as the node reported it.
type podEnd struct {
	namespace, name, index string
	code                   int
}

// podRun is one pod's process on the node.
type podRun struct {
	name, namespace string
	cmd             *exec.Cmd
	done            chan struct{}
	exit            int
	lost            bool // SIGKILLed with its node: no status is ever written
	termed          bool // sent SIGTERM for its deletion (once: a second one hurries malarun)
	statusDone      bool
	log             string
}

// run reconciles until ctx ends, then kills what it started.
func (s *standIn) run(ctx context.Context) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		s.reconcile(ctx)
		select {
		case <-ctx.Done():
			s.killAll()
			return
		case <-tick.C:
		}
	}
}

func (s *standIn) note(format string, a ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.logs) < 100 {
		s.logs = append(s.logs, fmt.Sprintf(format, a...))
	}
}

func (s *standIn) reconcile(ctx context.Context) {
	pods, err := s.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if strings.HasPrefix(pod.Namespace, "kube-") {
			continue
		}
		switch {
		case pod.Spec.NodeName == "" && pod.DeletionTimestamp == nil:
			b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
				Target: corev1.ObjectReference{Kind: "Node", Name: s.nodeFor(pod.Namespace)}}
			if err := s.client.CoreV1().Pods(pod.Namespace).Bind(ctx, b, metav1.CreateOptions{}); err != nil && !apierrors.IsConflict(err) {
				s.note("bind %s/%s: %v", pod.Namespace, pod.Name, err)
			}
		case pod.Spec.NodeName == s.node || strings.HasPrefix(pod.Spec.NodeName, s.node+"-"):
			s.tend(ctx, pod)
		}
	}
}

func (s *standIn) nodeFor(namespace string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n, ok := s.nodeOf[namespace]; ok {
		return n
	}
	return s.node
}

// tend starts a bound pod, stops one being deleted, and reports an end.
func (s *standIn) tend(ctx context.Context, pod *corev1.Pod) {
	s.mu.Lock()
	r := s.pods[pod.UID]
	s.mu.Unlock()
	if r == nil {
		if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			s.finalize(ctx, pod)
			return
		}
		r = &podRun{name: pod.Name, namespace: pod.Namespace, done: make(chan struct{})}
		s.mu.Lock()
		s.pods[pod.UID] = r
		s.mu.Unlock()
		go s.runPod(pod.DeepCopy(), r)
		return
	}
	if r.lost {
		return
	}
	if pod.DeletionTimestamp != nil && r.cmd != nil && !r.termed {
		r.termed = true
		select {
		case <-r.done:
		default:
			// What a kubelet does at a graceful deletion (an eviction):
			// SIGTERM now; SIGKILL after the grace.
			_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGTERM)
			grace := 30 * time.Second
			if pod.DeletionGracePeriodSeconds != nil {
				grace = time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
			}
			time.AfterFunc(grace, func() { _ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL) })
		}
	}
	select {
	case <-r.done:
	default:
		return
	}
	if !r.statusDone {
		if err := s.writeEnd(ctx, pod, r.exit); err != nil {
			s.note("status of %s/%s: %v", pod.Namespace, pod.Name, err)
			return
		}
		r.statusDone = true
		s.mu.Lock()
		s.ends = append(s.ends, podEnd{namespace: pod.Namespace, name: pod.Name, index: pod.Annotations["batch.kubernetes.io/job-completion-index"], code: r.exit})
		s.mu.Unlock()
	}
	if pod.DeletionTimestamp != nil {
		s.finalize(ctx, pod)
	}
}

// finalize removes a pod that is being deleted, as the kubelet does once
// its containers are gone.
func (s *standIn) finalize(ctx context.Context, pod *corev1.Pod) {
	if pod.DeletionTimestamp == nil {
		return
	}
	zero := int64(0)
	err := s.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero,
		Preconditions: &metav1.Preconditions{UID: &pod.UID}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		s.note("finalize %s/%s: %v", pod.Namespace, pod.Name, err)
	}
}

// writeEnd writes the container's end as the pod's status.
func (s *standIn) writeEnd(ctx context.Context, pod *corev1.Pod, code int) error {
	p, err := s.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	phase := corev1.PodSucceeded
	if code != 0 {
		phase = corev1.PodFailed
	}
	now := metav1.Now()
	p.Status.Phase = phase
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: p.Spec.Containers[0].Name, Image: p.Spec.Containers[0].Image,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: int32(code), FinishedAt: now, StartedAt: now,
			Reason: map[bool]string{true: "Completed", false: "Error"}[code == 0]}}}}
	_, err = s.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	return err
}

// markRunning writes that the pod's container runs.
func (s *standIn) markRunning(pod *corev1.Pod) {
	ctx := context.Background()
	p, err := s.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		return
	}
	now := metav1.Now()
	p.Status.Phase = corev1.PodRunning
	p.Status.StartTime = &now
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: p.Spec.Containers[0].Name, Image: p.Spec.Containers[0].Image,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}, Ready: true, Started: new(true)}}
	if _, err := s.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		s.note("running %s/%s: %v", pod.Namespace, pod.Name, err)
	}
}

// runPod runs the init containers in order, then the container, and
// records its exit code.
func (s *standIn) runPod(pod *corev1.Pod, r *podRun) {
	defer close(r.done)
	r.exit = 128 // a pod that could not be set up
	for i := range pod.Spec.InitContainers {
		code, err := s.runContainer(pod, &pod.Spec.InitContainers[i], r)
		if err != nil || code != 0 {
			s.note("%s/%s init %s: exit %d, %v", pod.Namespace, pod.Name, pod.Spec.InitContainers[i].Name, code, err)
			r.exit = code
			return
		}
	}
	s.markRunning(pod)
	code, err := s.runContainer(pod, &pod.Spec.Containers[0], r)
	if err != nil {
		s.note("%s/%s: %v", pod.Namespace, pod.Name, err)
	}
	r.exit = code
}

// runContainer runs c's command in a mount namespace holding the pod's
// volumes, and returns its exit code (128+signal when killed).
func (s *standIn) runContainer(pod *corev1.Pod, c *corev1.Container, r *podRun) (int, error) {
	env, err := s.containerEnv(pod, c)
	if err != nil {
		return 128, err
	}
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	argv := append(append([]string{}, c.Command...), c.Args...)
	if len(c.Command) == 0 {
		argv = append([]string{"malarun"}, c.Args...) // the image's ENTRYPOINT
	}
	for i := range argv {
		argv[i] = expand(argv[i], vars)
	}
	script, err := s.mountScript(pod, c, vars)
	if err != nil {
		return 128, err
	}
	log, err := os.OpenFile(filepath.Join(s.root, pod.Namespace, pod.Name+"."+c.Name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 128, err
	}
	defer log.Close()
	cmd := exec.Command("unshare", append([]string{"--mount", "--propagation", "private", "--", "sh", "-ec",
		script + "\nexec \"$@\"", "pod"}, argv...)...)
	cmd.Env = append(env, "PATH="+s.bin+":/usr/local/bin:/usr/bin:/bin", "HOME=/home/malarun")
	cmd.Env = append(cmd.Env, s.env(pod)...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	s.mu.Lock()
	if r.lost {
		s.mu.Unlock()
		return 137, nil
	}
	err = cmd.Start()
	if err == nil {
		r.cmd = cmd
	}
	s.mu.Unlock()
	if err != nil {
		return 128, err
	}
	err = cmd.Wait()
	if cmd.ProcessState == nil {
		return 128, err
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return cmd.ProcessState.ExitCode(), nil
}

// evict asks the API to evict the pod (policy/v1), as a node drain does.
func (s *standIn) evict(ctx context.Context, namespace, name string) error {
	return s.client.PolicyV1().Evictions(namespace).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}})
}

// lose kills the pod's processes outright and never reports on it, and
// removes its node, as when a node dies: the pod garbage collector then
// fails the pod (after its 40 s quarantine), and the namespace's next pods
// go to the node that is left.
func (s *standIn) lose(ctx context.Context, namespace, name string) error {
	pod, err := s.client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if pod.Spec.NodeName == s.node {
		return fmt.Errorf("pod %s/%s is on %s, which the other scenarios need", namespace, name, s.node)
	}
	s.mu.Lock()
	r := s.pods[pod.UID]
	if r != nil {
		r.lost = true
		if r.cmd != nil {
			_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
		}
	}
	s.nodeOf[namespace] = s.node
	s.mu.Unlock()
	if r == nil {
		return fmt.Errorf("no pod %s/%s on the node", namespace, name)
	}
	<-r.done
	return s.client.CoreV1().Nodes().Delete(ctx, pod.Spec.NodeName, metav1.DeleteOptions{})
}

// killAll ends every process the node started.
func (s *standIn) killAll() {
	s.mu.Lock()
	var waits []chan struct{}
	for _, r := range s.pods {
		r.lost = true
		if r.cmd != nil && r.cmd.Process != nil {
			_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
		}
		waits = append(waits, r.done)
	}
	s.mu.Unlock()
	for _, d := range waits {
		<-d
	}
}
