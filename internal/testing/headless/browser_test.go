package headless

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The driver sees what the checks need: a script the policy allows runs
// and its click handler works with a real click; one it does not allow is
// blocked and reported as an error; a request is seen.
func TestBrowserSeesPolicyClicksAndRequests(t *testing.T) {
	path := Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := Start(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	own := `document.getElementById("b").addEventListener("click", () => { document.title = "clicked"; });`
	sum := sha256.Sum256([]byte(own))
	page := `<!doctype html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'sha256-` + base64.StdEncoding.EncodeToString(sum[:]) + `'">
<title>t</title></head><body><button id="b">b</button>
<p>&lt;script&gt;window.pwned=1&lt;/script&gt;</p>
<script>window.pwned = 2;</script>
<script>` + own + `</script></body></html>`
	file := filepath.Join(t.TempDir(), "page.html")
	if err := os.WriteFile(file, []byte(page), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := b.Open(ctx, "file://"+file)
	if err != nil {
		t.Fatal(err)
	}
	var pwned string
	if err := p.Eval(ctx, "typeof window.pwned", &pwned); err != nil || pwned != "undefined" {
		t.Errorf("a script the policy forbids ran: window.pwned is %q (%v)", pwned, err)
	}
	if errs := p.ConsoleErrors(); len(errs) != 1 || !strings.Contains(errs[0], "Content Security Policy") {
		t.Errorf("console errors %q, want the one CSP violation", errs)
	}
	if err := p.Click(ctx, "#b"); err != nil {
		t.Fatal(err)
	}
	var title string
	if err := p.Eval(ctx, "document.title", &title); err != nil || title != "clicked" {
		t.Errorf("after a click, title %q (%v)", title, err)
	}
	if reqs := p.Requests(); !slices.Equal(reqs, []string{"file://" + file}) {
		t.Errorf("requests %q, want the page's own document only", reqs)
	}
	png, err := p.Screenshot(ctx, 400, 300)
	if err != nil || !strings.HasPrefix(string(png), "\x89PNG") {
		t.Errorf("screenshot: %d bytes, %v", len(png), err)
	}
	if err := b.Close(); err != nil {
		t.Error(err)
	}
	if err := p.Eval(ctx, "1", nil); err == nil {
		t.Error("a call after Close succeeded")
	}
}
