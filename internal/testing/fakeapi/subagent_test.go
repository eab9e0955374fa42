package fakeapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
)

// A sub-agent's requests (the CLI names the agent in X-Claude-Code-Agent-Id,
// §F35) take from their own script, the main agent's never do.
func TestSubagentScriptAnswersTheAgentsRequests(t *testing.T) {
	srv := Start(t, WithScript(Text("main 1"), Text("main 2")), WithSubagentScript(Text("agent 1")))
	if got := stream(t, srv, "s1", "task").Text; got != "main 1" {
		t.Errorf("main got %q", got)
	}
	if got := agentStream(t, srv, "s1", "a1").Text; got != "agent 1" {
		t.Errorf("agent got %q", got)
	}
	if got := stream(t, srv, "s1", "task").Text; got != "main 2" {
		t.Errorf("main got %q", got)
	}
	if got := agentStream(t, srv, "s1", "a1").Text; got != ExhaustedText {
		t.Errorf("a second agent request got %q, want the fallback", got)
	}
	reqs := srv.Requests()
	if reqs[1].AgentID != "a1" || reqs[0].AgentID != "" {
		t.Errorf("agent ids %q %q", reqs[0].AgentID, reqs[1].AgentID)
	}
}

// NoAnswer sends nothing, not even the headers, until the client gives up.
func TestNoAnswerSendsNothing(t *testing.T) {
	srv := Start(t, WithScript(NoAnswer()))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		resp, err := postErr(ctx, srv.URL(), "s1", conversation("task"))
		if err == nil {
			resp.Body.Close()
			err = errors.New("headers came")
		}
		done <- err
	}()
	stalls, err := srv.WaitStalls(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if r := stalls[0].Request.Reply; r.Step != "no answer" || r.Status != 0 {
		t.Errorf("recorded %+v", r)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("the client saw %v, want only its own cancel", err)
	}
}

// agentStream is stream for a sub-agent's request.
func agentStream(t *testing.T, srv *Server, session, agent string) assembled {
	t.Helper()
	b, _ := json.Marshal(conversation("sub task"))
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL()+"/v1/messages", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Claude-Code-Session-Id", session)
	req.Header.Set("X-Claude-Code-Agent-Id", agent)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	evs, err := readEvents(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return assemble(t, evs)
}
