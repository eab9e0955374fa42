// Package netprobe is malarun's one look at the network (docs/design.md
// §D17): when claude cannot connect to the API before the run ever had an
// answer, Probe looks at the address as the CLI would reach it (DNS, TCP, a
// TLS handshake; no request) and says what retrying cannot fix. What a
// finding means, and whether it ends the run, is internal/endpoint's pure
// decision; this package only looks.
package netprobe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/malarun/malarun/internal/endpoint"
	"github.com/malarun/malarun/internal/statefile"
)

// probeTimeout bounds one probe: a look that takes longer found nothing
// retrying cannot fix (a slow network is the transient kind).
const probeTimeout = 5 * time.Second

// Probe looks at the API's address as the CLI would reach it: the host
// name, a TCP connection to its port and, for https, the server's
// certificate. It sends no request. It finds a cause only where the CLI
// would certainly fail the same way; anything else (an answer, a timeout,
// a reset, a temporary DNS failure, a proxy in the way) is Unknown.
func Probe(ctx context.Context, t endpoint.Target) endpoint.Finding {
	if t.URL == nil || t.Proxy != "" {
		return endpoint.Finding{}
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	host := t.URL.Hostname()
	port := t.URL.Port()
	if port == "" {
		port = "443"
		if t.URL.Scheme == "http" {
			port = "80"
		}
	}
	if invalidName(host) {
		// RFC 6761, section 6.4: names under .invalid never resolve; no DNS server
		// needs to be asked (nor can one that is down make this flaky).
		return mustKnow("ENOTFOUND")
	}
	if net.ParseIP(host) == nil {
		if _, err := net.DefaultResolver.LookupHost(ctx, host); err != nil {
			if de, ok := errors.AsType[*net.DNSError](err); ok && de.IsNotFound {
				return mustKnow("ENOTFOUND")
			}
			return endpoint.Finding{}
		}
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, port))
	if err != nil {
		return dialFinding(err)
	}
	defer conn.Close()
	if t.URL.Scheme != "https" {
		return endpoint.Finding{}
	}
	return tlsFinding(ctx, conn, host, t.ExtraCAs, t.NoVerify, time.Now())
}

// invalidName reports a name under the reserved top-level domain "invalid".
func invalidName(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	return h == "invalid" || strings.HasSuffix(h, ".invalid")
}

func dialFinding(err error) endpoint.Finding {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return mustKnow("ECONNREFUSED")
	case errors.Is(err, syscall.ENETUNREACH):
		return mustKnow("ENETUNREACH")
	case errors.Is(err, syscall.EHOSTUNREACH):
		return mustKnow("EHOSTUNREACH")
	}
	return endpoint.Finding{}
}

// tlsFinding does a TLS handshake on conn and judges what the server sent.
// A server that answers the handshake with something that is not TLS
// speaks plain HTTP on that port (an https:// base URL for an http one):
// the CLI's every request fails with EPROTO, and waiting never heals it
// (issue 42). Otherwise, unless noVerify, the certificate: root stores
// differ (Go reads the system's; the CLI has its own), so "no trusted
// authority" alone proves nothing; a self-signed certificate, one out of
// its validity period, or one for another name fails in every store, and
// those are the causes found here.
func tlsFinding(ctx context.Context, conn net.Conn, host, extraCAs string, noVerify bool, now time.Time) endpoint.Finding {
	tc := tls.Client(conn, &tls.Config{ServerName: host, InsecureSkipVerify: true}) // verified below, to tell why it fails
	if err := tc.HandshakeContext(ctx); err != nil {
		if rhe, notTLS := errors.AsType[tls.RecordHeaderError](err); notTLS && strings.Contains(rhe.Msg, "does not look like a TLS handshake") {
			return plainHTTP()
		}
		return endpoint.Finding{}
	}
	if noVerify {
		return endpoint.Finding{}
	}
	certs := tc.ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return endpoint.Finding{}
	}
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	if extraCAs != "" {
		pem, err := readCAs(extraCAs)
		if err != nil {
			// The CLI may trust what this file holds: without it, no
			// certificate can be said to fail in every store.
			return endpoint.Finding{}
		}
		roots.AppendCertsFromPEM(pem)
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	leaf := certs[0]
	selfSigned, expired, notYetValid, nameMismatch := mustKnow("DEPTH_ZERO_SELF_SIGNED_CERT"), mustKnow("CERT_HAS_EXPIRED"),
		mustKnow("CERT_NOT_YET_VALID"), mustKnow("ERR_TLS_CERT_ALTNAME_INVALID")
	_, verr := leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: roots, Intermediates: inter, CurrentTime: now})
	switch {
	case verr == nil:
		return endpoint.Finding{}
	case isSelfSigned(leaf) && !trusted(leaf, roots):
		return selfSigned
	case now.After(leaf.NotAfter):
		return expired
	case now.Before(leaf.NotBefore):
		return notYetValid
	case leaf.VerifyHostname(host) != nil:
		return nameMismatch
	}
	return endpoint.Finding{}
}

// isSelfSigned: the certificate names itself as issuer and its signature
// checks with its own key.
func isSelfSigned(c *x509.Certificate) bool {
	return string(c.RawIssuer) == string(c.RawSubject) && c.CheckSignatureFrom(c) == nil
}

// trusted reports whether a self-signed c is itself one of the roots
// (NODE_EXTRA_CA_CERTS may hold it), whatever its names and dates say.
func trusted(c *x509.Certificate, roots *x509.CertPool) bool {
	_, err := c.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: c.NotBefore})
	return err == nil
}

// mustKnow is the finding of a code endpoint knows (endpoint.Known).
func mustKnow(code string) endpoint.Finding {
	f, _ := endpoint.Known(code)
	return f
}

// maxCAsBytes bounds what is read of NODE_EXTRA_CA_CERTS: a bundle of every
// public CA is about 250 KiB.
const maxCAsBytes = 4 << 20

// readCAs reads a certificate bundle named by the environment: a regular
// file only (a FIFO would block the look, a device never end), at most
// maxCAsBytes (statefile.ReadFollowing: a link is followed, the bundle is
// the user's).
func readCAs(path string) ([]byte, error) {
	b, err := statefile.ReadFollowing(path, maxCAsBytes)
	var notRegular *statefile.NotRegularError
	var tooLarge *statefile.TooLargeError
	switch {
	case errors.As(err, &notRegular):
		return nil, fmt.Errorf("NODE_EXTRA_CA_CERTS %s is not a regular file", path)
	case errors.As(err, &tooLarge):
		return nil, fmt.Errorf("NODE_EXTRA_CA_CERTS %s is over %d MiB", path, maxCAsBytes>>20)
	}
	return b, err
}

// plainHTTP is the finding of an https:// base URL whose port answers
// without TLS: the TLS handshake is answered with something else, most
// often plain HTTP (Node's code for it is EPROTO, "wrong version number").
func plainHTTP() endpoint.Finding {
	return endpoint.Finding{Cause: endpoint.Scheme, Code: "EPROTO", What: "the port does not speak TLS (an https:// URL for a plain http:// port?)"}
}
