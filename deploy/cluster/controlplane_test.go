package cluster_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// controlPlane is etcd, kube-apiserver and kube-controller-manager on
// 127.0.0.1, with throwaway credentials in dir. stop ends them whatever
// happened (each in a process group of its own), and removes dir.
type controlPlane struct {
	dir    string
	procs  []*exec.Cmd
	config *rest.Config
	client *kubernetes.Clientset
}

// The controllers the recipe needs: the Job controller decides, the
// garbage collector removes a finished Job's pods, the service-account
// controllers make the namespaces' default accounts (the ServiceAccount
// admission needs them), the namespace controller ends a scenario's
// namespace, and the pod garbage collector fails the pods of a node that
// is gone (40 s after, its quarantine), as it does for a lost node.
const controllers = "job-controller,garbage-collector-controller,serviceaccount-controller,serviceaccount-token-controller,namespace-controller,pod-garbage-collector-controller"

const adminToken = "malarun-cluster-test-admin"

// startControlPlane starts the three from bin (kube-apiserver,
// kube-controller-manager) and etcd from PATH, and waits until the API
// answers /readyz.
func startControlPlane(bin string) (cp *controlPlane, err error) {
	dir, err := os.MkdirTemp("", "malarun-cluster-")
	if err != nil {
		return nil, err
	}
	cp = &controlPlane{dir: dir}
	defer func() {
		if err != nil {
			cp.stop()
			cp = nil
		}
	}()
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	etcdClient, etcdPeer, apiPort := ports[0], ports[1], ports[2]
	pki, err := makePKI(dir)
	if err != nil {
		return nil, err
	}
	token := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(token, []byte(adminToken+",admin,admin-uid,system:masters\n"), 0o600); err != nil {
		return nil, err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(etcdClient)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(etcdPeer)
	if err := cp.start("etcd", "etcd", "--data-dir", filepath.Join(dir, "etcd"), "--name", "default",
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "default="+peerURL); err != nil {
		return nil, err
	}
	server := "https://127.0.0.1:" + strconv.Itoa(apiPort)
	if err := cp.start("kube-apiserver", filepath.Join(bin, "kube-apiserver"),
		"--etcd-servers", etcdURL, "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
		"--secure-port", strconv.Itoa(apiPort), "--cert-dir", filepath.Join(dir, "apiserver-certs"),
		"--tls-cert-file", pki.serverCert, "--tls-private-key-file", pki.serverKey, "--client-ca-file", pki.caCert,
		"--token-auth-file", token, "--authorization-mode", "RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc", "--service-account-key-file", pki.saPub,
		"--service-account-signing-key-file", pki.saKey, "--service-cluster-ip-range", "10.96.0.0/24",
		// It refuses 127.0.0.1 as the address it publishes for the
		// kubernetes Service otherwise (measured, issue 33).
		"--endpoint-reconciler-type", "none"); err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, fmt.Appendf(nil, kubeconfigText, pki.caCert, server, adminToken), 0o600); err != nil {
		return nil, err
	}
	if err := cp.start("kube-controller-manager", filepath.Join(bin, "kube-controller-manager"),
		"--kubeconfig", kubeconfig, "--controllers", controllers, "--leader-elect=false",
		"--service-account-private-key-file", pki.saKey, "--root-ca-file", pki.caCert,
		"--bind-address", "127.0.0.1", "--secure-port", "0"); err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(pki.caCert)
	if err != nil {
		return nil, err
	}
	cp.config = &rest.Config{Host: server, BearerToken: adminToken, TLSClientConfig: rest.TLSClientConfig{CAData: ca}, QPS: 100, Burst: 200}
	if cp.client, err = kubernetes.NewForConfig(cp.config); err != nil {
		return nil, err
	}
	return cp, cp.waitReady(90 * time.Second)
}

const kubeconfigText = `apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    certificate-authority: %s
    server: %s
users:
- name: admin
  user:
    token: %s
contexts:
- name: test
  context: {cluster: test, user: admin}
current-context: test
`

// start runs one component in a process group of its own, its output in
// dir/<name>.log.
func (cp *controlPlane) start(name, path string, args ...string) error {
	log, err := os.Create(filepath.Join(cp.dir, name+".log"))
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	cp.procs = append(cp.procs, cmd)
	return nil
}

// waitReady waits for /readyz, or for a component to exit.
func (cp *controlPlane) waitReady(limit time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	for {
		body, err := cp.client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err == nil && string(body) == "ok" {
			return nil
		}
		for _, p := range cp.procs {
			if p.ProcessState != nil || syscall.Kill(p.Process.Pid, 0) != nil {
				return fmt.Errorf("%s exited; see %s", filepath.Base(p.Path), cp.dir)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the API was not ready within %v (%v); logs in %s", limit, err, cp.dir)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// stop ends every component (SIGTERM to its group, then SIGKILL after
// 10 s) and removes the folder: no process left, no port held.
func (cp *controlPlane) stop() {
	for i := len(cp.procs) - 1; i >= 0; i-- {
		p := cp.procs[i]
		_ = syscall.Kill(-p.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-p.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	if os.Getenv("MALARUN_CLUSTER_KEEP") == "" {
		os.RemoveAll(cp.dir)
	}
}

// freePorts finds n ports free on 127.0.0.1 now.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var out []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

// pki is the throwaway credentials: a CA, the API's serving certificate
// for 127.0.0.1, and the service-account signing key pair.
type pki struct {
	caCert, serverCert, serverKey, saKey, saPub string
}

func makePKI(dir string) (pki, error) {
	p := pki{caCert: filepath.Join(dir, "ca.crt"), serverCert: filepath.Join(dir, "server.crt"), serverKey: filepath.Join(dir, "server.key"),
		saKey: filepath.Join(dir, "sa.key"), saPub: filepath.Join(dir, "sa.pub")}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return p, err
	}
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "malarun-cluster-test-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return p, err
	}
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return p, err
	}
	srv := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")},
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default.svc"}}
	srvDER, err := x509.CreateCertificate(rand.Reader, srv, ca, &srvKey.PublicKey, caKey)
	if err != nil {
		return p, err
	}
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return p, err
	}
	srvKeyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		return p, err
	}
	saPubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return p, err
	}
	for path, block := range map[string]*pem.Block{
		p.caCert:     {Type: "CERTIFICATE", Bytes: caDER},
		p.serverCert: {Type: "CERTIFICATE", Bytes: srvDER},
		p.serverKey:  {Type: "EC PRIVATE KEY", Bytes: srvKeyDER},
		p.saKey:      {Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(saKey)},
		p.saPub:      {Type: "PUBLIC KEY", Bytes: saPubDER},
	} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			return p, err
		}
	}
	return p, nil
}
