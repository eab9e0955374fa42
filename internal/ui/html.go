package ui

import (
	"crypto/sha256"
	"encoding/base64"
	"html"
)

// HTMLText makes outside text safe in an HTML page (show's, the summary's):
// controls and bidirectional overrides shown as Inert shows them on a
// terminal (so the file is safe to cat, and no text displays other than it
// reads), then HTML-escaped.
func HTMLText(s string) string { return html.EscapeString(Inert(s)) }

// CSPSource is the Content-Security-Policy source that allows one inline
// element, the page's own style or script, by its hash.
func CSPSource(content string) string {
	sum := sha256.Sum256([]byte(content))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}
