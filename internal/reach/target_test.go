package reach

import "testing"

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
		{"http proxy does not apply to https", []string{"http_proxy=http://proxy:3128"}, "https://api.anthropic.com", "", true},
		{"no_proxy exempts", []string{"HTTPS_PROXY=http://proxy:3128", "NO_PROXY=localhost,.anthropic.com"}, "https://api.anthropic.com", "", true},
		{"another provider", []string{"ANTHROPIC_BASE_URL=http://h.invalid", "CLAUDE_CODE_USE_BEDROCK=1"}, "the endpoint CLAUDE_CODE_USE_BEDROCK selects", "", false},
		{"a provider switched off", []string{"ANTHROPIC_BASE_URL=http://h.invalid", "CLAUDE_CODE_USE_VERTEX=0"}, "http://h.invalid", "", true},
		{"no_proxy star", []string{"https_proxy=http://proxy:3128", "no_proxy=*"}, "https://api.anthropic.com", "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tg := TargetOf(c.env)
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
	tg := TargetOf([]string{"ANTHROPIC_BASE_URL=" + long})
	if len(tg.Shown) > maxShownBytes+len("…") {
		t.Errorf("shown address is %d bytes, want at most %d", len(tg.Shown), maxShownBytes)
	}
}
