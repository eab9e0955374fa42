package endpoint

import (
	"strings"
	"testing"
)

func TestTargetOf(t *testing.T) {
	cases := []struct {
		name      string
		env       []string
		shown     string
		proxy     string
		probeable bool
	}{
		{"default", nil, "https://api.anthropic.com", "", true},
		{"base url", []string{"ANTHROPIC_BASE_URL=http://no-such-host.invalid"}, "http://no-such-host.invalid", "", true},
		{"last one wins", []string{"ANTHROPIC_BASE_URL=http://a.invalid", "ANTHROPIC_BASE_URL=http://b.invalid:8080/v1"}, "http://b.invalid:8080/v1", "", true},
		{"credentials and query dropped", []string{"ANTHROPIC_BASE_URL=https://user:s3cret@gw.example.com:8443/api?key=s3cret#frag"}, "https://gw.example.com:8443/api", "", true},
		{"path escaped", []string{"ANTHROPIC_BASE_URL=http://h.invalid/a b\u202e"}, "http://h.invalid/a%20b%E2%80%AE", "", true},
		{"not a URL", []string{"ANTHROPIC_BASE_URL=::::"}, "ANTHROPIC_BASE_URL (not an http or https URL)", "", false},
		{"no host", []string{"ANTHROPIC_BASE_URL=http:///x"}, "ANTHROPIC_BASE_URL (not an http or https URL)", "", false},
		{"other scheme", []string{"ANTHROPIC_BASE_URL=ftp://h.invalid"}, "ANTHROPIC_BASE_URL (not an http or https URL)", "", false},
		{"https proxy", []string{"HTTPS_PROXY=http://proxy:3128"}, "https://api.anthropic.com", "HTTPS_PROXY", true},
		// The CLI's docs have HTTP_PROXY stand in when HTTPS_PROXY is not set.
		{"http proxy for https", []string{"http_proxy=http://proxy:3128"}, "https://api.anthropic.com", "http_proxy", true},
		{"all_proxy", []string{"ALL_PROXY=socks5://proxy:1080"}, "https://api.anthropic.com", "ALL_PROXY", true},
		// Versions read NO_PROXY differently: a proxy variable always stops the look.
		{"no_proxy is not trusted", []string{"HTTPS_PROXY=http://proxy:3128", "NO_PROXY=localhost,.anthropic.com"}, "https://api.anthropic.com", "HTTPS_PROXY", true},
		{"another provider", []string{"ANTHROPIC_BASE_URL=http://h.invalid", "CLAUDE_CODE_USE_BEDROCK=1"}, "the endpoint CLAUDE_CODE_USE_BEDROCK selects", "", false},
		{"a provider switched off", []string{"ANTHROPIC_BASE_URL=http://h.invalid", "CLAUDE_CODE_USE_VERTEX=0"}, "http://h.invalid", "", true},
		{"no_proxy star", []string{"https_proxy=http://proxy:3128", "no_proxy=*"}, "https://api.anthropic.com", "https_proxy", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tg := TargetOf(c.env, "/work", "")
			if tg.Shown != c.shown || tg.Proxy != c.proxy || (tg.URL != nil) != c.probeable {
				t.Errorf("TargetOf(%q) = shown %q proxy %q url %v; want %q %q probeable %v", c.env, tg.Shown, tg.Proxy, tg.URL, c.shown, c.proxy, c.probeable)
			}
		})
	}
}

func TestShownIsCapped(t *testing.T) {
	long := "http://h.invalid/"
	for len(long) < 1000 {
		long += "abcdefghij"
	}
	tg := TargetOf([]string{"ANTHROPIC_BASE_URL=" + long}, "/work", "")
	if len(tg.Shown) != maxShownBytes || !strings.HasSuffix(tg.Shown, "...") {
		t.Errorf("shown address %q is %d bytes, want %d ending in ...", tg.Shown, len(tg.Shown), maxShownBytes)
	}
	// One that fits exactly is not marked as cut.
	exact := "http://h.invalid/" + strings.Repeat("a", maxShownBytes-len("http://h.invalid/"))
	if tg := TargetOf([]string{"ANTHROPIC_BASE_URL=" + exact}, "/work", ""); tg.Shown != exact {
		t.Errorf("an address of %d bytes is shown as %q", maxShownBytes, tg.Shown)
	}
	// Escapes that push past the cap are cut too, in printable ASCII.
	wide := "http://h.invalid/" + strings.Repeat("\u00e9", 100)
	if tg := TargetOf([]string{"ANTHROPIC_BASE_URL=" + wide}, "/work", ""); len(tg.Shown) > maxShownBytes || strings.ContainsFunc(tg.Shown, func(r rune) bool { return r < ' ' || r > '~' }) {
		t.Errorf("shown %q (%d bytes)", tg.Shown, len(tg.Shown))
	}
}

func TestExtraCAsAreTheCLIsPath(t *testing.T) {
	if got := TargetOf([]string{"NODE_EXTRA_CA_CERTS=certs/ca.pem"}, "/work/repo", "").ExtraCAs; got != "/work/repo/certs/ca.pem" {
		t.Errorf("a relative NODE_EXTRA_CA_CERTS reads as %q, want it in the CLI's directory", got)
	}
	if got := TargetOf([]string{"NODE_EXTRA_CA_CERTS=/etc/ca.pem"}, "/work/repo", "").ExtraCAs; got != "/etc/ca.pem" {
		t.Errorf("an absolute one reads as %q", got)
	}
}

func TestShownWithProxyNamesTheProxy(t *testing.T) {
	tg := TargetOf([]string{"ANTHROPIC_BASE_URL=http://gw.example.com", "HTTP_PROXY=http://user:pw@proxy:3128"}, "/work", "")
	if got := tg.ShownWithProxy(); got != "http://gw.example.com (through the proxy in HTTP_PROXY)" {
		t.Errorf("shown %q", got)
	}
	if got := TargetOf(nil, "/work", "").ShownWithProxy(); got != "https://api.anthropic.com" {
		t.Errorf("shown without a proxy %q", got)
	}
}

// Hosts that end in a number are IPv4 addresses, read as the CLI's runtime
// reads them (WHATWG): the look goes where the CLI goes.
func TestNumericHostsAreReadAsTheCLIReadsThem(t *testing.T) {
	cases := []struct{ base, host, shown string }{
		{"http://127.1:8080", "127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"http://2130706433:8080/v1", "127.0.0.1:8080", "http://127.0.0.1:8080/v1"},
		{"http://0x7f000001", "127.0.0.1", "http://127.0.0.1"},
		{"http://0x7F.1:9", "127.0.0.1:9", "http://127.0.0.1:9"},
		{"https://0177.0.0.1", "127.0.0.1", "https://127.0.0.1"},
		{"http://10.0.0.1.:80", "10.0.0.1:80", "http://10.0.0.1:80"},
		{"http://api.example.com:80", "api.example.com:80", "http://api.example.com:80"},
		{"http://1.2.3.4.5", "", "ANTHROPIC_BASE_URL (a numeric host that is no IPv4 address)"},
		{"http://256.1.1.1", "", "ANTHROPIC_BASE_URL (a numeric host that is no IPv4 address)"},
		{"http://1.16777216", "", "ANTHROPIC_BASE_URL (a numeric host that is no IPv4 address)"},
		{"http://09.1", "", "ANTHROPIC_BASE_URL (a numeric host that is no IPv4 address)"},
		{"http://[::1]:8080", "[::1]:8080", "http://[::1]:8080"},
	}
	for _, c := range cases {
		tg := TargetOf([]string{"ANTHROPIC_BASE_URL=" + c.base}, "/", "")
		host := ""
		if tg.URL != nil {
			host = tg.URL.Host
		}
		if host != c.host || tg.Shown != c.shown {
			t.Errorf("%s: host %q shown %q, want %q %q", c.base, host, tg.Shown, c.host, c.shown)
		}
	}
}

// A settings file of the CLI's that sets the address (or a variable that
// bears on it: claudesettings.Find) means malarun cannot know where the CLI
// connects: no look, and the address shown names the file.
func TestAddressInClaudeSettingsMeansNoLook(t *testing.T) {
	env := []string{"ANTHROPIC_BASE_URL=http://127.0.0.1:1"}
	for _, file := range []string{"/home/u/.claude/settings.json", "/work/.claude/settings.local.json (not JSON)"} {
		tg := TargetOf(env, "/work", file)
		if tg.URL != nil || tg.Settings != file || !strings.Contains(tg.Shown, file) {
			t.Errorf("%s: %+v", file, tg)
		}
	}
	if tg := TargetOf(env, "/work", ""); tg.URL == nil || tg.Settings != "" {
		t.Errorf("no settings: %+v", tg)
	}
}
