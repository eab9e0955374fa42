package attempt

import (
	"strings"
	"testing"

	"github.com/malarun/malarun/internal/reach"
)

func TestUnreachableReason(t *testing.T) {
	f, _ := reach.Known("ECONNREFUSED")
	got := UnreachableReason("http://127.0.0.1:1", f)
	if want := "cannot reach the API at http://127.0.0.1:1: connection refused (ECONNREFUSED); check ANTHROPIC_BASE_URL and the network"; got != want {
		t.Errorf("reason %q, want %q", got, want)
	}
	cli := reach.FromResultText("API Error: Unable to connect to API (ConnectionRefused)")
	if got := UnreachableReason("http://h", cli); !strings.Contains(got, "(claude's own error)") {
		t.Errorf("a cause from claude's text does not say so: %q", got)
	}
}
