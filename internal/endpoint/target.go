package endpoint

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/malarun/malarun/internal/environ"
)

// defaultBaseURL is where the CLI sends requests without ANTHROPIC_BASE_URL.
const defaultBaseURL = "https://api.anthropic.com"

// maxShownBytes caps the address in a message: it comes from the
// environment, which a user (or a script) can fill with anything.
const maxShownBytes = 200

// Target is the API address the CLI uses, read from the CLI's environment.
type Target struct {
	// URL is the parsed ANTHROPIC_BASE_URL (or the default); nil when it
	// does not parse as an http or https URL with a host.
	URL *url.URL
	// Shown is the address safe to print: scheme, host, port and path only
	// (no user or password, no query, no fragment), printable ASCII, capped.
	Shown string
	// Proxy names a proxy variable that is set (HTTPS_PROXY, HTTP_PROXY,
	// ALL_PROXY, in either case): the CLI may connect through it, so a
	// direct look tells nothing and none is made.
	Proxy string
	// ExtraCAs is NODE_EXTRA_CA_CERTS, made absolute against the CLI's
	// working directory: certificates the CLI trusts besides its own store,
	// trusted by the probe too.
	ExtraCAs string
	// NoVerify: NODE_TLS_REJECT_UNAUTHORIZED=0, the CLI accepts any certificate.
	NoVerify bool
	// Settings names the settings file of the CLI's that sets a variable
	// bearing on the address (claudesettings): what the CLI will use is not
	// known, so URL is nil and no look is made.
	Settings string
	// Provider names the switch (CLAUDE_CODE_USE_BEDROCK, ...) that sends
	// the CLI to another provider's endpoint: ANTHROPIC_BASE_URL is not
	// where it connects, so URL is nil and no look is made.
	Provider string
}

// providerSwitches are the CLI's switches to another provider's endpoint (2.1.330).
func providerSwitches() []string {
	return []string{
		"CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY", "CLAUDE_CODE_USE_GATEWAY",
		"CLAUDE_CODE_USE_ANTHROPIC_AWS", "CLAUDE_CODE_USE_ANTHROPIC_GOOGLE_CLOUD", "CLAUDE_CODE_USE_MANTLE",
	}
}

// AddressVars are the variables TargetOf reads: a settings file of
// claude's that sets one of them (claudesettings.Find) decides where the
// CLI connects, in a way malarun does not know.
func AddressVars() []string {
	return append([]string{"ANTHROPIC_BASE_URL", "NODE_EXTRA_CA_CERTS", "NODE_TLS_REJECT_UNAUTHORIZED",
		"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"}, providerSwitches()...)
}

// TargetOf reads the API address and what bears on reaching it from env
// (KEY=VALUE entries; the last one of a name wins, as exec does), for a
// CLI that runs in cwd. settings names the settings file of claude's that
// sets one of AddressVars (claudesettings.Find; "" when none does): then
// where the CLI connects is not known, and no look is made.
func TargetOf(env []string, cwd, settings string) Target {
	get := func(name string) string { return environ.Get(env, name) }
	raw := get("ANTHROPIC_BASE_URL")
	if raw == "" {
		raw = defaultBaseURL
	}
	t := Target{ExtraCAs: get("NODE_EXTRA_CA_CERTS"), NoVerify: get("NODE_TLS_REJECT_UNAUTHORIZED") == "0"}
	if t.ExtraCAs != "" && !filepath.IsAbs(t.ExtraCAs) {
		t.ExtraCAs = filepath.Join(cwd, t.ExtraCAs) // as the CLI, which runs there, reads it
	}
	if settings != "" {
		t.Settings, t.Shown = settings, "the address claude's settings set ("+settings+")"
		return t
	}
	for _, p := range providerSwitches() {
		if v := strings.ToLower(get(p)); v != "" && v != "0" && v != "false" {
			t.Provider, t.Shown = p, "the endpoint "+p+" selects"
			return t
		}
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		t.Shown = "ANTHROPIC_BASE_URL (not an http or https URL)"
		return t
	}
	if addr, numeric, ok := whatwgIPv4(u.Hostname()); numeric {
		if !ok {
			t.Shown = "ANTHROPIC_BASE_URL (a numeric host that is no IPv4 address)"
			return t
		}
		// The address the CLI's runtime connects to (ipv4.go).
		port := u.Port()
		u.Host = addr.String()
		if port != "" {
			u.Host += ":" + port
		}
	}
	t.URL = u
	t.Shown = ShownURL(u)
	// Any proxy variable stops the look, whatever the scheme and NO_PROXY
	// say: the CLI's docs have HTTP_PROXY stand in for HTTPS_PROXY, and
	// its reading of NO_PROXY differs between versions. A look that went
	// direct where the CLI goes through a proxy could find a refusal the
	// CLI never meets, and end a run that would have worked.
	for _, n := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"} {
		if get(n) != "" {
			t.Proxy = n
			break
		}
	}
	return t
}

// ShownWithProxy is Shown, and the proxy variable the CLI may have gone
// through: a refusal the CLI reports can be the proxy's.
func (t Target) ShownWithProxy() string {
	if t.Proxy == "" {
		return t.Shown
	}
	return t.Shown + " (through the proxy in " + t.Proxy + ")"
}

// ShownURL is u without what can hold a secret (user, password, query,
// fragment), every byte outside printable ASCII percent-encoded, capped:
// a URL for a message (the API's here, a telemetry collector's).
func ShownURL(u *url.URL) string {
	s := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
	var b strings.Builder
	i := 0
	for ; i < len(s) && b.Len() < maxShownBytes; i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	if i < len(s) || b.Len() > maxShownBytes { // something was left out
		return b.String()[:maxShownBytes-3] + "..." // printable ASCII, within the cap
	}
	return b.String()
}
