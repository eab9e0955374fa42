package netprobe

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/endpoint"
)

// closedPort is a loopback port nothing listens on: one that was listened
// on and closed (the kernel refuses a connection to it at once).
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// quietTLSServer is an https server with httptest's self-signed
// certificate that does not log the handshakes a probe leaves unfinished.
func quietTLSServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func target(t *testing.T, raw string, extra ...string) endpoint.Target {
	t.Helper()
	return endpoint.TargetOf(append([]string{"ANTHROPIC_BASE_URL=" + raw}, extra...), t.TempDir(), "")
}

func TestProbe(t *testing.T) {
	ok := httptest.NewServer(http.NotFoundHandler())
	defer ok.Close()
	tlsSrv := quietTLSServer(t)
	// The self-signed certificate, trusted through NODE_EXTRA_CA_CERTS.
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	cert := tlsSrv.Certificate()
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	tlsURL, _ := url.Parse(tlsSrv.URL)
	okURL, _ := url.Parse(ok.URL)
	cases := []struct {
		name string
		t    endpoint.Target
		want string // the Code; "" for Unknown
	}{
		{"name under .invalid", target(t, "http://no-such-host.invalid"), "ENOTFOUND"},
		{"closed port", target(t, "http://"+closedPort(t)), "ECONNREFUSED"},
		{"https on a closed port", target(t, "https://"+closedPort(t)), "ECONNREFUSED"},
		{"an answering server", target(t, ok.URL), ""},
		{"self-signed https", target(t, tlsSrv.URL), "DEPTH_ZERO_SELF_SIGNED_CERT"},
		{"self-signed, trusted by NODE_EXTRA_CA_CERTS", target(t, tlsSrv.URL, "NODE_EXTRA_CA_CERTS="+caFile), ""},
		{"trusted, but not for this name", target(t, "https://localhost:"+tlsURL.Port(), "NODE_EXTRA_CA_CERTS="+caFile), "ERR_TLS_CERT_ALTNAME_INVALID"},
		{"certificates not checked", target(t, tlsSrv.URL, "NODE_TLS_REJECT_UNAUTHORIZED=0"), ""},
		{"plain http to a TLS server", target(t, "http://"+tlsURL.Host), ""},
		{"https to a plain HTTP server", target(t, "https://"+okURL.Host), "EPROTO"},
		{"https to a plain HTTP server, certificates not checked", target(t, "https://"+okURL.Host, "NODE_TLS_REJECT_UNAUTHORIZED=0"), "EPROTO"},
		{"through a proxy: no look", target(t, "http://no-such-host.invalid", "HTTP_PROXY=http://"+closedPort(t)), ""},
		{"not a URL", target(t, "::::"), ""},
		{"another provider's endpoint: no look", target(t, "http://no-such-host.invalid", "CLAUDE_CODE_USE_VERTEX=true"), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Probe(context.Background(), c.t)
			if got.Code != c.want {
				t.Fatalf("Probe(%s) = %+v, want code %q", c.t.Shown, got, c.want)
			}
			if got.FromCLI {
				t.Error("a probe's finding says it came from the CLI")
			}
		})
	}
}

func TestProbeExpiredCertificate(t *testing.T) {
	srv := quietTLSServer(t)
	leaf, err := x509.ParseCertificate(srv.TLS.Certificates[0].Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	expired := mustKnow("CERT_HAS_EXPIRED")
	// The same certificate judged after it expired: every store refuses it.
	// (Self-signed wins when nothing trusts it, as in Node: so trust it.)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leaf.Raw}), 0o600)
	if got := tlsFinding(context.Background(), conn, "127.0.0.1", caFile, false, leaf.NotAfter.Add(time.Hour)); got != expired {
		t.Errorf("tlsFinding after NotAfter = %+v, want %+v", got, expired)
	}
}

func TestProbeTimesOutAsUnknown(t *testing.T) {
	// A server that accepts and never says a word of the TLS handshake.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		if c, err := l.Accept(); err == nil {
			accepted <- c
		}
	}()
	conn, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	server := <-accepted
	defer server.Close()
	// The handshake itself must end with the look's time: an ended
	// context stands for the timeout (no sleeping). Without it the
	// handshake would wait for the silent server, and this test with it.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := tlsFinding(ctx, conn, "127.0.0.1", "", false, time.Now()); got.Config() {
		t.Errorf("tlsFinding with its time up = %+v, want Unknown", got)
	}
}

// NODE_EXTRA_CA_CERTS comes from the environment: a FIFO or a device must
// not hold the look, and a file that cannot be read means the CLI may
// trust what malarun cannot see, so no certificate is blamed.
func TestExtraCAsThatCannotBeReadBlameNoCertificate(t *testing.T) {
	srv := quietTLSServer(t) // Go's test certificate: self-signed
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, "/dev/zero", filepath.Join(dir, "missing.pem")} {
		if got := Probe(context.Background(), target(t, srv.URL, "NODE_EXTRA_CA_CERTS="+path)); got.Config() {
			t.Errorf("NODE_EXTRA_CA_CERTS=%s: %+v, want no cause", path, got)
		}
	}
	big := filepath.Join(dir, "big.pem")
	os.WriteFile(big, make([]byte, maxCAsBytes+1), 0o600)
	if _, err := readCAs(big); err == nil {
		t.Errorf("a bundle over %d bytes was read", maxCAsBytes)
	}
}
