package endpoint

import "testing"

// The decision, row by row: which texts and codes are configuration errors,
// before and after the run has talked to the API. The texts are the CLIs'
// own (testdata/transcripts/api-unreachable-*, docs/design.md §F25).
func TestJudgeResultTexts(t *testing.T) {
	selfSigned, expired, _, nameMismatch := certFindings()
	cases := []struct {
		name string
		text string
		want Finding
	}{
		{"2.1.330 name not found", "API Error: Can't reach the API server — check your internet or DNS (ENOTFOUND)", mustKnow("ENOTFOUND")},
		{"2.1.330 refused", "API Error: Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)", mustKnow("ECONNREFUSED")},
		{"2.1.197 refused (also its text for a name not found)", "API Error: Unable to connect to API (ConnectionRefused)", mustKnow("ECONNREFUSED")},
		{"2.1.330 self-signed", "API Error: Unable to connect to API: Self-signed certificate detected (DEPTH_ZERO_SELF_SIGNED_CERT). The certificate comes from an authority Claude Code doesn't trust (x)", selfSigned},
		{"2.1.197 self-signed", "API Error: Unable to connect to API: Self-signed certificate detected. Check your proxy or corporate SSL certificates", selfSigned},
		{"expired", "API Error: Unable to connect to API: SSL certificate has expired", expired},
		{"hostname", "API Error: Unable to connect to API: SSL certificate hostname mismatch", nameMismatch},
		{"leaf not trusted", "API Error: Unable to connect to API: SSL certificate verification failed (UNABLE_TO_VERIFY_LEAF_SIGNATURE). The certificates ...", mustKnow("UNABLE_TO_VERIFY_LEAF_SIGNATURE")},
		{"no route", "API Error: No internet route — check your connection or VPN (ENETUNREACH)", mustKnow("ENETUNREACH")},
		// Transient: retried as before.
		{"temporary DNS failure", "API Error: Can't reach the API server — check your internet or DNS (EAI_AGAIN)", Finding{}},
		{"reset", "API Error: The connection was closed (ECONNRESET)", Finding{}},
		{"timeout", "API Error: Request timed out (ETIMEDOUT)", Finding{}},
		{"overloaded", `API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, Finding{}},
		{"stalled stream", "API Error: The response stopped arriving", Finding{}},
		// Not the CLI's error text: the model's words never count.
		{"model text", "I could not connect (ENOTFOUND) so I stopped.", Finding{}},
		{"model text naming a phrase", "Self-signed certificate detected in your repo's fixtures.", Finding{}},
		{"code not in parentheses", "API Error: ENOTFOUND", Finding{}},
		{"empty", "", Finding{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := FromResultText(c.text)
			if got.Cause != c.want.Cause || got.Code != c.want.Code || got.What != c.want.What {
				t.Fatalf("FromResultText(%q) = %+v, want %+v", c.text, got, c.want)
			}
			if c.want.Config() && !got.FromCLI {
				t.Errorf("a finding from the result text must say so (FromCLI)")
			}
			if got := Judge(false, got); got != c.want.Config() {
				t.Errorf("Judge(before any success) = %v, want %v", got, c.want.Config())
			}
			if Judge(true, got) {
				t.Errorf("Judge(after a success) = true: a run that talked to the API retries a lost network")
			}
		})
	}
}

func TestJudgeProbeFindings(t *testing.T) {
	selfSigned, expired, notYetValid, nameMismatch := certFindings()
	for _, f := range []Finding{mustKnow("ENOTFOUND"), mustKnow("ECONNREFUSED"), mustKnow("EHOSTUNREACH"), selfSigned, expired, notYetValid, nameMismatch} {
		if !Judge(false, f) {
			t.Errorf("Judge(false, %v) = false, want a configuration error", f)
		}
		if Judge(true, f) {
			t.Errorf("Judge(true, %v) = true, want a retry after an earlier success", f)
		}
	}
	if Judge(false, Finding{}) {
		t.Error("Judge(false, Unknown) = true: a reachable host, a timeout or a reset must retry")
	}
}

func TestResultTextScanIsBounded(t *testing.T) {
	long := "API Error: " + string(make([]byte, 2*resultScanBytes)) + "(ENOTFOUND)"
	if f := FromResultText(long); f.Config() {
		t.Errorf("a code past the first %d bytes was read: %+v", resultScanBytes, f)
	}
}

func TestShouldProbe(t *testing.T) {
	cases := []struct {
		talked bool
		status int
		err    string
		want   bool
	}{
		{false, 0, "unknown", true}, // both CLIs, for every connection failure (§F25)
		{false, 0, "", true},
		{true, 0, "unknown", false}, // the network went away mid-run: retry
		{false, 529, "overloaded", false},
		{false, 500, "server_error", false},
		{false, 429, "rate_limit", false},
		{false, 401, "authentication_failed", false},
		{false, 0, "cloud_credential_error", false},
	}
	for _, c := range cases {
		if got := ShouldProbe(c.talked, c.status, c.err); got != c.want {
			t.Errorf("ShouldProbe(%v, %d, %q) = %v, want %v", c.talked, c.status, c.err, got, c.want)
		}
	}
}

func TestFindingWords(t *testing.T) {
	if got := mustKnow("ENOTFOUND").String(); got != "name not found (ENOTFOUND)" {
		t.Errorf("String() = %q", got)
	}
	if got := (Finding{}).String(); got != "no cause found" {
		t.Errorf("Unknown.String() = %q", got)
	}
}

func TestKnown(t *testing.T) {
	if f, ok := Known("ENOTFOUND"); !ok || f.Cause != NotFound || f.FromCLI {
		t.Errorf("Known(ENOTFOUND) = %+v, %v", f, ok)
	}
	for _, code := range []string{"ECONNRESET", "ETIMEDOUT", "EAI_AGAIN", ""} {
		if f, ok := Known(code); ok || f.Config() {
			t.Errorf("Known(%q) = %+v, %v: a passing failure", code, f, ok)
		}
	}
}

// mustKnow is the finding of a code Known knows.
func mustKnow(code string) Finding {
	f, _ := Known(code)
	return f
}
