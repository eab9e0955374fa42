package reach

import (
	"fmt"
	"net/url"
	"strings"
)

// DefaultBaseURL is where the CLI sends requests without ANTHROPIC_BASE_URL.
const DefaultBaseURL = "https://api.anthropic.com"

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
	// Proxy names the proxy variable set for the URL's scheme: the CLI
	// connects through it, so a direct look tells nothing and none is made.
	Proxy string
	// ExtraCAs is NODE_EXTRA_CA_CERTS: certificates the CLI trusts besides
	// its own store, trusted by the probe too.
	ExtraCAs string
	// NoVerify: NODE_TLS_REJECT_UNAUTHORIZED=0, the CLI accepts any certificate.
	NoVerify bool
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

// TargetOf reads the API address and what bears on reaching it from env
// (KEY=VALUE entries; the last one of a name wins, as exec does).
func TargetOf(env []string) Target {
	get := func(name string) string {
		v := ""
		for _, kv := range env {
			if rest, ok := strings.CutPrefix(kv, name+"="); ok {
				v = rest
			}
		}
		return v
	}
	raw := get("ANTHROPIC_BASE_URL")
	if raw == "" {
		raw = DefaultBaseURL
	}
	t := Target{ExtraCAs: get("NODE_EXTRA_CA_CERTS"), NoVerify: get("NODE_TLS_REJECT_UNAUTHORIZED") == "0"}
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
	t.URL = u
	t.Shown = shown(u)
	names := []string{"HTTPS_PROXY", "https_proxy"}
	if u.Scheme == "http" {
		names = []string{"HTTP_PROXY", "http_proxy"}
	}
	for _, n := range names {
		if get(n) != "" && !noProxy(get("NO_PROXY")+","+get("no_proxy"), u.Hostname()) {
			t.Proxy = n
		}
	}
	return t
}

// shown is u without what can hold a secret (user, password, query,
// fragment), every byte outside printable ASCII percent-encoded, capped.
func shown(u *url.URL) string {
	s := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < maxShownBytes; i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	if b.Len() >= maxShownBytes {
		return b.String()[:maxShownBytes] + "…"
	}
	return b.String()
}

// noProxy reports whether list (NO_PROXY: comma-separated hosts, domain
// suffixes, "*") exempts host from the proxy. Ports and CIDR ranges are
// not read: an entry malarun cannot read leaves the proxy in place, and
// with a proxy malarun does not look (the CLI's retries apply).
func noProxy(list, host string) bool {
	host = strings.ToLower(host)
	for _, e := range strings.Split(list, ",") {
		e = strings.ToLower(strings.TrimSpace(e))
		switch {
		case e == "":
		case e == "*":
			return true
		case host == strings.TrimPrefix(e, "."):
			return true
		case strings.HasSuffix(host, "."+strings.TrimPrefix(e, ".")):
			return true
		}
	}
	return false
}
