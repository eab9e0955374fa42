package ui

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/malarun/malarun/internal/event"
)

func TestEscaping(t *testing.T) {
	if got, want := escapeData("100% done\r\nnext: a,b"), "100%25 done%0D%0Anext: a,b"; got != want {
		t.Errorf("EscapeData = %q, want %q", got, want)
	}
	if got, want := escapeProperty("a: b, 5%\n"), "a%3A b%2C 5%25%0A"; got != want {
		t.Errorf("EscapeProperty = %q, want %q", got, want)
	}
	if got, want := ErrorCommand("malarun: x failed", "boom\n::set-output name=x::y"), "::error title=malarun%3A x failed::boom%0A::set-output name=x::y"; got != want {
		t.Errorf("ErrorCommand = %q, want %q", got, want)
	}
}

func TestWriteInert(t *testing.T) {
	var b bytes.Buffer
	writeInert(&b, "::error::boom\nok")
	m := regexp.MustCompile(`^::stop-commands::([0-9a-f]{32})\n::error::boom\nok\n::([0-9a-f]{32})::\n$`).FindStringSubmatch(b.String())
	if m == nil || m[1] != m[2] {
		t.Fatalf("got %q", b.String())
	}
	if stopToken() == stopToken() {
		t.Errorf("tokens repeat")
	}
}

func TestActionsLogDefusesAndOrders(t *testing.T) {
	var b bytes.Buffer
	a := NewActionsLog(&b)
	a.Write([]byte(`{"reason":"see ##[error]boom"}` + "\n  ::warning::x\npart"))
	a.Command("::group::attempt 1")
	a.Write([]byte("ial\n"))
	a.Flush()
	want := `{"reason":"see ##\u005berror]boom"}` + "\n> " + "  ::warning::x\npart\n::group::attempt 1\nial\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
	var v map[string]string
	if err := json.Unmarshal([]byte(strings.SplitN(b.String(), "\n", 2)[0]), &v); err != nil || v["reason"] != "see ##[error]boom" {
		t.Errorf("the defused JSON line does not decode to the original: %v %q", err, v)
	}
}

func TestGroups(t *testing.T) {
	var b bytes.Buffer
	g := NewGroups(NewActionsLog(&b))
	g.Observe(event.Event{Kind: event.AttemptStarted, Issue: "i", Attempt: 1, Session: session})
	g.Observe(event.Event{Kind: event.Progress})
	g.Observe(event.Event{Kind: event.AttemptEnded, Attempt: 1})
	g.Observe(event.Event{Kind: event.AttemptStarted, Issue: "i", Attempt: 2, Session: session, Resume: true})
	g.Close()
	g.Close()
	want := "::group::i: attempt 1, session 5fcbbccf\n::endgroup::\n::group::i: attempt 2, resuming session 5fcbbccf\n::endgroup::\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
