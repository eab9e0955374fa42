package supervisor_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/malarun/malarun/internal/attempt"
	"github.com/malarun/malarun/internal/endpoint"
	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/outcome"
	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/supervisor"
	"github.com/malarun/malarun/internal/testing/testchild"
)

// fakeProbe answers every look with one finding and remembers the targets
// it was asked about: no DNS, no network.
type fakeProbe struct {
	mu      sync.Mutex
	finding endpoint.Finding
	asked   []endpoint.Target
}

func (p *fakeProbe) probe(_ context.Context, t endpoint.Target) endpoint.Finding {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, t)
	return p.finding
}

func (p *fakeProbe) calls() []endpoint.Target {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]endpoint.Target(nil), p.asked...)
}

var nameNotFound, _ = endpoint.Known("ENOTFOUND")

// A transcript of lines for a fake child, in a test's folder.
func writeTranscript(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "transcript.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Lines shaped like the CLIs' own (testdata/transcripts/api-unreachable-*).
const (
	unknownRetryLine = `{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":539,"error_status":null,"error":"unknown","session_id":"` + testchild.SessionID + `"}`
	api500ResultLine = `{"type":"result","subtype":"success","is_error":true,"api_error_status":500,"terminal_reason":"api_error","result":"API Error: 500 Internal Server Error","session_id":"` + testchild.SessionID + `","total_cost_usd":0}`
)

// The CLI's first retry without an answer, in a run that never had one:
// malarun looks, finds the name does not exist, looks again every
// ProbeEvery, and stops once it has stayed so for unreachable_window (not
// after the CLI's ten retries, nor its own three attempts), naming the
// address without its secrets.
func TestUnreachableAPIStopsAfterTheWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testchild.Hang, testchild.EnvTranscript+"="+transcripts+"api-unreachable-notfound-2.1.330.jsonl", testchild.EnvLines+"=2",
			"ANTHROPIC_BASE_URL=http://user:s3cret@no-such-host.invalid/v1?token=s3cret")
		h.cfg.IdleTimeout = time.Hour // the stop is not a hang
		h.cfg.MaxAttempts = 3
		p := &fakeProbe{finding: nameNotFound}
		h.probe = p.probe
		rep, err, took := h.run()
		wantKind(t, err, outcome.APIUnreachable,
			"cannot reach the API at http://no-such-host.invalid/v1: name not found (ENOTFOUND); check ANTHROPIC_BASE_URL and the network")
		if took != supervisor.DefaultUnreachableWindow {
			t.Errorf("took %v, want unreachable_window %v", took, supervisor.DefaultUnreachableWindow)
		}
		if strings.Contains(err.Error(), "s3cret") || strings.Contains(h.logs.String(), "s3cret") {
			t.Errorf("a credential of the URL reached the message or the log: %v", err)
		}
		if len(rep.History) != 1 || rep.History[0].Ended != "api-unreachable" || rep.History[0].Outcome != "api-unreachable" {
			t.Fatalf("history %+v, want one attempt ended api-unreachable", rep.History)
		}
		// At 0, 5, 10, ... 30 s.
		want := int(supervisor.DefaultUnreachableWindow/attempt.ProbeEvery) + 1
		if got := p.calls(); len(got) != want || got[0].Shown != "http://no-such-host.invalid/v1" {
			t.Errorf("probed %d times (%+v), want %d looks at http://no-such-host.invalid/v1", len(got), got[0].Shown, want)
		}
		rec := readRecord(t, h)
		if rec.Status != record.Failed || !strings.Contains(rec.Reason, "ENOTFOUND") {
			t.Errorf("record %s %q, want failed naming ENOTFOUND", rec.Status, rec.Reason)
		}
	})
}

// A probe that finds nothing wrong (a reset connection, a server that is
// up again) leaves the CLI to its retries: here it goes silent and the
// run ends as a hang, as before.
func TestReachableAPILeavesTheRetriesAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testchild.Hang, testchild.EnvTranscript+"="+transcripts+"api-unreachable-notfound-2.1.330.jsonl", testchild.EnvLines+"=2")
		h.cfg.IdleTimeout = 500 * time.Millisecond
		p := &fakeProbe{}
		h.probe = p.probe
		rep, err, _ := h.run()
		wantKind(t, err, outcome.RetriesExhausted, "no output for")
		if len(p.calls()) != 1 {
			t.Errorf("%d looks, want 1", len(p.calls()))
		}
		if rep.History[0].Ended != "hang" {
			t.Errorf("attempt ended %q, want hang", rep.History[0].Ended)
		}
	})
}

// After an answer from the API (here, the first attempt's assistant
// message), a connection failure is the network going away: no look, and
// the run retries as before, in a later attempt too.
func TestTalkedRunRetriesAnUnreachableAPI(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		resumed := writeTranscript(t, testchild.InitLine, unknownRetryLine)
		h := newHarness(t, testchild.ResumeAware, testchild.EnvTranscript+"="+transcripts+"text-success.jsonl", testchild.EnvLines+"=2",
			testchild.EnvResumed+"="+resumed, testchild.EnvExit+"=1")
		h.cfg.IdleTimeout = 500 * time.Millisecond
		h.cfg.MaxAttempts = 2
		p := &fakeProbe{finding: nameNotFound}
		h.probe = p.probe
		rep, err, _ := h.run()
		wantKind(t, err, outcome.RetriesExhausted, "2 attempts")
		if n := len(p.calls()); n != 0 {
			t.Errorf("%d looks at the address after the run had talked, want none", n)
		}
		if len(rep.History) != 2 || rep.History[1].Ended != "exited" {
			t.Errorf("history %+v, want a hang then a crash", rep.History)
		}
	})
}

// 2.1.330 refuses a self-signed certificate at once, with an error result
// naming it and no api_retry line: that text decides, no look needed.
func TestCLIErrorNamingACertificateStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testchild.Replay, testchild.EnvTranscript+"="+transcripts+"api-unreachable-tls-2.1.330.jsonl", testchild.EnvExit+"=1",
			"ANTHROPIC_BASE_URL=https://127.0.0.1:8443")
		h.cfg.MaxAttempts = 3
		p := &fakeProbe{}
		h.probe = p.probe
		rep, err, _ := h.run()
		wantKind(t, err, outcome.APIUnreachable,
			"cannot reach the API at https://127.0.0.1:8443: self-signed certificate (DEPTH_ZERO_SELF_SIGNED_CERT) (claude's own error); check ANTHROPIC_BASE_URL, and NODE_EXTRA_CA_CERTS")
		if len(rep.History) != 1 || len(p.calls()) != 0 {
			t.Errorf("%d attempts and %d looks, want 1 and 0", len(rep.History), len(p.calls()))
		}
	})
}

// A failed result is never called a success, whatever its subtype says.
func TestFailedResultReasonNeverSaysSuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testchild.Replay, testchild.EnvTranscript+"="+writeTranscript(t, testchild.InitLine, api500ResultLine), testchild.EnvExit+"=1")
		h.probe = (&fakeProbe{}).probe
		_, err, _ := h.run()
		wantKind(t, err, outcome.RetriesExhausted, "error result (API status 500, terminal reason api_error): API Error: 500 Internal Server Error")
		if strings.Contains(err.Error(), "success") {
			t.Errorf("the reason of a failed result says success: %v", err)
		}
	})
}

func readRecord(t *testing.T, h *harness) record.Record {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(h.cfg.StateDir, h.cfg.IssueID, journal.RecordFile))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := record.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// A look at the address that has not answered when the attempt ends is
// called off with it: nothing of an attempt outlives it. (In synctest's
// bubble a probe left waiting would be a goroutine blocked for ever, which
// fails the test.)
func TestALookStillUnderWayEndsWithTheAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testchild.Replay, testchild.EnvTranscript+"="+writeTranscript(t,
			testchild.InitLine, unknownRetryLine, testchild.TextLine, testchild.Result))
		asked := make(chan struct{}, 1)
		h.probe = func(ctx context.Context, _ endpoint.Target) endpoint.Finding {
			asked <- struct{}{}
			<-ctx.Done() // a look that never finds anything by itself
			return endpoint.Finding{}
		}
		if _, err, _ := h.run(); err != nil {
			t.Fatalf("run: %v", err)
		}
		// The look runs on a goroutine of its own, which a loaded machine
		// may not have run before the attempt ended: let it (it finds its
		// context ended and returns), then ask whether it was started.
		synctest.Wait()
		select {
		case <-asked:
		default:
			t.Fatal("no look was started: the test tests nothing")
		}
	})
}

// A gateway that opens its port a few seconds after malarun starts: the
// first looks find it refused, a later one finds it open, and the CLI's
// retries are left to reach it: no exit 10 (issue 31).
func TestLateGatewayIsNotUnreachable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testchild.Hang, testchild.EnvTranscript+"="+transcripts+"api-unreachable-refused-2.1.330.jsonl", testchild.EnvLines+"=2")
		h.cfg.IdleTimeout, h.cfg.FirstByteTimeout = time.Hour, time.Hour
		h.cfg.SessionTimeout = 2 * time.Minute // the script never answers: something must end the run
		refused, _ := endpoint.Known("ECONNREFUSED")
		looks := 0
		h.probe = func(context.Context, endpoint.Target) endpoint.Finding {
			looks++
			if looks <= 2 {
				return refused // the gateway opens after the second look
			}
			return endpoint.Finding{}
		}
		_, err, _ := h.run()
		wantKind(t, err, outcome.SessionTimeout, "")
		if looks != 3 {
			t.Errorf("%d looks, want 3 (refused, refused, open)", looks)
		}
	})
}

// unreachable_window 0 is the old rule: the first certain look stops.
func TestUnreachableWindowZeroStopsAtTheFirstLook(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testchild.Hang, testchild.EnvTranscript+"="+transcripts+"api-unreachable-notfound-2.1.330.jsonl", testchild.EnvLines+"=2")
		h.cfg.IdleTimeout = time.Hour
		h.cfg.UnreachableWindow = 0
		p := &fakeProbe{finding: nameNotFound}
		h.probe = p.probe
		_, err, took := h.run()
		wantKind(t, err, outcome.APIUnreachable, "ENOTFOUND")
		if took != 0 || len(p.calls()) != 1 {
			t.Errorf("took %v with %d looks, want at once with one", took, len(p.calls()))
		}
	})
}
