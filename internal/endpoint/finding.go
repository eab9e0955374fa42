// Package endpoint tells a configuration mistake from a passing network
// failure when the CLI cannot reach the API: a host name that does not
// exist, a port nobody listens on, a certificate the CLI will refuse, an
// https:// URL for a port that speaks plain HTTP, or no
// route to the network, against a reset connection, a timeout or an
// overloaded server.
//
// The CLI does not say which (docs/design.md §F25): every connection failure
// is an api_retry line with error "unknown" and no status, ten of them over
// about three minutes, and only the final result names a code. So at the
// first such line malarun looks itself (internal/netprobe, the only I/O of
// it), and the decision is pure, here: Judge, ShouldProbe and
// FromResultText, and the address from the CLI's environment (TargetOf). A run that has
// talked to the API once treats a later failure as the network going away:
// the CLI and malarun retry it as before.
package endpoint

// Cause is why the API cannot be reached, as far as malarun can tell.
type Cause int

const (
	// Unknown: nothing retrying cannot fix was found (the host answered, a
	// timeout, a reset, a temporary DNS failure, or malarun did not look).
	Unknown Cause = iota
	// NotFound: the host name does not exist (NXDOMAIN).
	NotFound
	// Refused: the host exists and nothing listens on the port.
	Refused
	// NoRoute: this machine has no route to the host's network (no network
	// at all, a VPN that is down).
	NoRoute
	// Certificate: the server's TLS certificate is one the CLI refuses.
	Certificate
	// Scheme: the base URL's scheme is not what the port speaks (https://
	// on a port that answers plain HTTP).
	Scheme
)

// Finding is what malarun learnt about the API's address. Code and What
// are malarun's own words from a fixed set (never text from the CLI or
// the network), so they are safe in any message.
type Finding struct {
	Cause Cause
	// Code is the error code as Node and the CLI name it: ENOTFOUND,
	// ECONNREFUSED, DEPTH_ZERO_SELF_SIGNED_CERT, ...
	Code string
	// What says it in words: "name not found", "connection refused", ...
	What string
	// FromCLI: the CLI's own result named it; otherwise malarun's probe found it.
	FromCLI bool
}

// Config reports whether the finding is one retrying cannot fix.
func (f Finding) Config() bool { return f.Cause != Unknown }

// String is the finding for a message: "name not found (ENOTFOUND)".
func (f Finding) String() string {
	if f.Cause == Unknown {
		return "no cause found"
	}
	return f.What + " (" + f.Code + ")"
}

// Hint is what the user should check for this cause.
func (f Finding) Hint() string {
	switch f.Cause {
	case Scheme:
		return "check the scheme of ANTHROPIC_BASE_URL: for a port that speaks plain HTTP the URL starts with http://"
	case Certificate:
		return "check ANTHROPIC_BASE_URL, and NODE_EXTRA_CA_CERTS for a private CA"
	case NoRoute:
		return "check the network (or VPN) and ANTHROPIC_BASE_URL"
	}
	return "check ANTHROPIC_BASE_URL and the network"
}
