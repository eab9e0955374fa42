// Package cluster_test runs the Kubernetes recipe (deploy/kubernetes/) on a
// real control plane: etcd, kube-apiserver and kube-controller-manager on
// 127.0.0.1, where the real Job controller turns malarun's exit codes into
// retries, failed indexes and ignored disruptions. A kubelet stand-in
// (kubelet_test.go) runs each pod's command as a local process: the real
// malarun, the real CLI at its pinned version, the project's fake API.
// `make cluster-test` builds the control plane and runs this (docs/cluster-test.md).
package cluster_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// env names what make cluster-test gives this test.
const (
	envKubeBin   = "MALARUN_KUBE_BIN"   // the folder of kube-apiserver and kube-controller-manager
	envClaudeDir = "MALARUN_CLAUDE_DIR" // the pinned CLI's npm folder (node_modules inside)
)

// the cluster, set once by TestMain before any test runs.
var cluster struct {
	cp      *controlPlane
	node    *standIn
	work    string // the test's folder: binaries, the node's disk
	malarun string
	fakeapi string
}

// hostDirs are the mount points the pods' mount namespaces bind over;
// they must exist on the host's root file system. Those this test made are
// removed at the end.
var hostDirs = []string{"/opt/malarun-cluster-test/claude", "/home/malarun", "/state", "/etc/malarun/config", "/etc/malarun/prompts"}

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	bin, claude := os.Getenv(envKubeBin), os.Getenv(envClaudeDir)
	missing := ""
	switch {
	case bin == "" || claude == "":
		missing = envKubeBin + " and " + envClaudeDir + " are not set (make cluster-test sets them)"
	case os.Geteuid() != 0:
		missing = "not root: the kubelet stand-in needs mount namespaces"
	}
	if _, err := exec.LookPath("etcd"); err != nil && missing == "" {
		missing = "etcd is not on PATH (Debian: apt-get install etcd-server)"
	}
	if missing != "" {
		bar := strings.Repeat("!", 72)
		fmt.Fprintf(os.Stderr, "%s\ncluster-test: SKIPPED: %s\n%s\n", bar, missing, bar)
		if os.Getenv("CI") == "true" {
			fmt.Fprintln(os.Stderr, "cluster-test: CI=true, so this is a failure")
			return 1
		}
		return 0
	}
	work, err := os.MkdirTemp("", "malarun-cluster-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if os.Getenv("MALARUN_CLUSTER_KEEP") == "" {
		defer os.RemoveAll(work)
	} else {
		fmt.Fprintln(os.Stderr, "cluster-test: MALARUN_CLUSTER_KEEP: keeping", work)
	}
	made, err := makeHostDirs()
	defer removeHostDirs(made)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := buildTools(work, claude); err != nil {
		fmt.Fprintln(os.Stderr, "cluster-test:", err)
		return 1
	}
	start := time.Now()
	cp, err := startControlPlane(bin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cluster-test: control plane:", err)
		return 1
	}
	defer cp.stop()
	fmt.Fprintf(os.Stderr, "cluster-test: control plane ready in %v\n", time.Since(start).Round(100*time.Millisecond))
	cluster.cp, cluster.work = cp, work
	ctx, cancel := context.WithCancel(context.Background())
	node := &standIn{client: cp.client, node: "standin", root: filepath.Join(work, "node"), claude: claude,
		bin: filepath.Join(work, "bin"), pods: map[types.UID]*podRun{}, nodeOf: map[string]string{}, env: scenarioEnv}
	if err := registerNode(ctx, node, node.node); err != nil {
		cancel()
		fmt.Fprintln(os.Stderr, "cluster-test: node:", err)
		return 1
	}
	done := make(chan struct{})
	go func() { node.run(ctx); close(done) }()
	cluster.node = node
	code := m.Run()
	cancel()
	<-done
	if code != 0 {
		for _, l := range node.logs {
			fmt.Fprintln(os.Stderr, "node:", l)
		}
	}
	return code
}

// buildTools builds malarun and fakeapi from this repository into
// work/bin, with a claude that is the pinned CLI as the pods see it.
func buildTools(work, claude string) error {
	bin := filepath.Join(work, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	cluster.malarun, cluster.fakeapi = filepath.Join(bin, "malarun"), filepath.Join(work, "fakeapi")
	for out, pkg := range map[string]string{cluster.malarun: "./cmd/malarun", cluster.fakeapi: "./cmd/fakeapi"} {
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Dir = "../.."
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("build %s: %v\n%s", pkg, err, b)
		}
	}
	// The pods see the CLI's package at /opt/malarun-cluster-test/claude
	// (kubelet_test.go's mountScript): the image's copy.
	return os.Symlink("/opt/malarun-cluster-test/claude/node_modules/.bin/claude", filepath.Join(bin, "claude"))
}

func makeHostDirs() (made []string, err error) {
	for _, d := range hostDirs {
		if _, err := os.Stat(d); err == nil {
			continue
		}
		// The first folder of the path that does not exist yet is the one
		// to remove afterwards.
		top := d
		for p := filepath.Dir(d); p != "/"; p = filepath.Dir(p) {
			if _, err := os.Stat(p); err == nil {
				break
			}
			top = p
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return made, err
		}
		made = append(made, top)
	}
	return made, nil
}

func removeHostDirs(made []string) {
	for i := len(made) - 1; i >= 0; i-- {
		os.RemoveAll(made[i])
	}
}

// registerNode makes a Node the stand-in plays, ready.
func registerNode(ctx context.Context, s *standIn, name string) error {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	created, err := s.client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	created.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	created.Status.Capacity = corev1.ResourceList{}
	_, err = s.client.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
	return err
}
