package fakeapi

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

// maxBody bounds a request body. The CLI's first request is about 80 KB;
// a test with a 200 KB prompt and a long history stays far below this.
const maxBody = 64 << 20

// stallBuffer is how many stall starts [Server.Stalled] holds for a reader
// that is not listening yet.
const stallBuffer = 64

// Server is a fake Anthropic Messages API on 127.0.0.1. Its methods are
// safe for concurrent use.
type Server struct {
	hs      *httptest.Server
	cfg     config
	closing chan struct{} // closed by Close: ends stalls and gates
	closed  sync.Once
	stalled chan StallInfo

	mu       sync.Mutex
	def      script
	sessions map[string]*script
	// subagents answers sub-agents' requests when hasSubagents.
	subagents    script
	hasSubagents bool
	requests     []*Request
	stalls       []StallInfo
	changed      chan struct{} // closed and replaced whenever requests or stalls grow
	nextMsg      int
	nextTool     int
}

// StallInfo tells that a [Stall] step began: message_start has been sent
// and the connection is now held open.
type StallInfo struct {
	// Request is the recorded request being stalled.
	Request *Request
	// Time is when message_start had been flushed.
	Time time.Time
}

// New starts a server on 127.0.0.1 with an ephemeral port. The caller must
// Close it; in tests prefer [Start].
func New(opts ...Option) *Server {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	s := &Server{
		cfg:      cfg,
		closing:  make(chan struct{}),
		stalled:  make(chan StallInfo, stallBuffer),
		sessions: map[string]*script{},
		changed:  make(chan struct{}),
	}
	s.def.push(cfg.steps...)
	s.subagents.push(cfg.subagents...)
	s.hasSubagents = len(cfg.subagents) > 0
	for id, steps := range cfg.sessions {
		s.EnqueueSession(id, steps...)
	}
	// httptest listens on 127.0.0.1:0 and its Close waits for every
	// handler to return, which is what makes "Close never leaks a stalled
	// handler" checkable.
	s.hs = httptest.NewServer(s)
	return s
}

// Start is New for a test: the server is closed when the test ends.
func Start(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	s := New(opts...)
	tb.Cleanup(s.Close)
	return s
}

// URL is the base URL to give the CLI as ANTHROPIC_BASE_URL.
func (s *Server) URL() string { return s.hs.URL }

// Close ends every stalled or gated request (their connections are dropped),
// stops the server and waits for all its handlers to return. It is safe to
// call more than once.
func (s *Server) Close() {
	s.closed.Do(func() {
		close(s.closing)
		s.hs.Close()
	})
}

// Enqueue appends steps to the default script.
func (s *Server) Enqueue(steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.def.push(steps...)
}

// EnqueueSession appends steps to the script of one session, creating it
// (see [WithSessionScript]).
func (s *Server) EnqueueSession(sessionID string, steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, ok := s.sessions[sessionID]
	if !ok {
		q = &script{}
		s.sessions[sessionID] = q
	}
	q.push(steps...)
}

// Remaining is how many conversation requests the default script can still
// answer, or -1 if it ends in a step repeated forever.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.def.remaining()
}

// ServeHTTP answers one request. It is exported only because Server is an
// http.Handler; tests talk to [Server.URL].
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	req := parseRequest(r, body, time.Now())
	if err != nil {
		// The client went away mid-body, or the body is too large: record
		// what came, answer if anyone is left to hear it.
		s.record(req, Reply{Step: "unreadable body", Status: http.StatusBadRequest}, nil)
		writeJSONError(w, http.StatusBadRequest, nil, "invalid_request_error", "fakeapi: reading body: "+err.Error(), "")
		return
	}

	switch {
	case r.Method == http.MethodHead:
		// A connectivity probe: 2.1.197 sends HEAD /, 2.1.330 HEAD /api/hello.
		s.record(req, Reply{Step: "probe", Status: http.StatusOK}, nil)
		w.WriteHeader(http.StatusOK)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		s.serveMessages(w, r, req)
	case r.Method == http.MethodGet:
		// The CLI in OAuth mode reads account endpoints (docs/design.md
		// §F19); an empty object lets it carry on.
		s.record(req, Reply{Step: "get", Status: http.StatusOK}, nil)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "{}")
	default:
		reqID := s.record(req, Reply{Step: "not found", Status: http.StatusNotFound}, nil)
		writeJSONError(w, http.StatusNotFound, nil, "not_found_error",
			fmt.Sprintf("fakeapi: no route for %s %s", r.Method, r.URL.Path), reqID)
	}
}

func (s *Server) serveMessages(w http.ResponseWriter, r *http.Request, req *Request) {
	if req.Parsed == nil {
		reqID := s.record(req, Reply{Step: "bad body", Status: http.StatusBadRequest}, nil)
		writeJSONError(w, http.StatusBadRequest, nil, "invalid_request_error", "fakeapi: body is not a JSON Messages request", reqID)
		return
	}
	req.Kind = s.cfg.classify(req)

	var step Step
	switch req.Kind {
	case KindConversation:
		// Taken under the same lock as the recording (in record), so steps
		// are consumed in the order requests are recorded.
	case KindCompaction:
		step = Text(compactionReplyText)
	case KindSide:
		step = Text(sideReplyText(req))
	default:
		reqID := s.record(req, Reply{Step: "unclassified", Status: http.StatusBadRequest}, nil)
		writeJSONError(w, http.StatusBadRequest, nil, "invalid_request_error", "fakeapi: request classified as "+req.Kind.String(), reqID)
		return
	}
	var rep reply
	reqID := s.record(req, Reply{}, func(rec *Reply) { step, rep = s.answerLocked(req, step, rec) })
	w.Header().Set("Request-Id", reqID)

	if step.gate != nil {
		select {
		case <-step.gate:
		case <-r.Context().Done():
			return
		case <-s.closing:
			panic(http.ErrAbortHandler) // drop the connection: there is no answer
		}
	}

	switch step.kind {
	case stepHTTPError:
		writeJSONError(w, step.status, step.header, step.errType, step.errMsg, reqID)
	case stepReply:
		if !req.Stream {
			s.writeMessageAfter(w, r, step, rep)
			return
		}
		s.streamReply(w, r, req, step, rep)
	case stepStreamError:
		if !req.Stream {
			// Without a stream there is no 200 to fail after: the same
			// failure arrives as an HTTP error.
			writeJSONError(w, http.StatusInternalServerError, nil, step.errType, step.errMsg, reqID)
			return
		}
		ev := startEvents(w)
		if ev.messageStart(rep) == nil {
			_ = ev.errorEvent(step.errType, step.errMsg)
		}
	case stepStall, stepNoAnswer:
		if req.Stream && step.kind == stepStall {
			ev := startEvents(w)
			if ev.messageStart(rep) != nil {
				return
			}
		}
		// A non-streaming request (only with a custom classifier) stalls
		// before its headers: there is no message_start to send.
		s.addStall(req)
		select {
		case <-r.Context().Done():
		case <-s.closing:
			panic(http.ErrAbortHandler)
		}
	}
}

// answerLocked takes the step that answers a conversation request (the
// responder's, else the script's; step as given for the CLI's own
// requests), makes it concrete, and fills in the record of the reply.
func (s *Server) answerLocked(req *Request, step Step, rec *Reply) (Step, reply) {
	if req.Kind == KindConversation {
		responded := false
		if s.cfg.responder != nil {
			step, responded = s.cfg.responder(req)
		}
		if !responded {
			step, rec.Exhausted = s.nextStepLocked(req)
			if rec.Exhausted && s.cfg.then != nil {
				step, rec.Exhausted = s.cfg.then(req), false
			}
		}
	}
	rep := s.resolveLocked(step, req)
	rec.Step = step.String()
	if req.Kind != KindConversation {
		rec.Step = req.Kind.String() + ": " + rec.Step
	}
	switch {
	case step.kind == stepNoAnswer:
		rec.Status = 0 // nothing is ever sent
	case step.kind == stepHTTPError:
		rec.Status = step.status
	case step.kind == stepStreamError && !req.Stream:
		rec.Status = http.StatusInternalServerError
	default:
		rec.Status = http.StatusOK
		rec.MessageID = rep.msgID
	}
	for _, b := range rep.blocks {
		if b.Type == "tool_use" {
			rec.ToolUseIDs = append(rec.ToolUseIDs, b.ID)
		}
	}
	return step, rep
}

// streamReply streams a reply paced as its step says: a silence before
// message_start, pings and gaps, and a stall in the middle if asked.
func (s *Server) streamReply(w http.ResponseWriter, r *http.Request, req *Request, step Step, rep reply) {
	p := pacer{ctx: r.Context(), closing: s.closing, ping: step.pace.Ping}
	ev := startEvents(w)
	p.ev = ev
	if !p.wait(step.pace.FirstEvent) || ev.messageStart(rep) != nil {
		return
	}
	stalled := func() {
		s.addStall(req)
		p.hold()
	}
	_ = ev.rest(rep, step.pace, p, stalled) // an error only means the client left
}

// record assigns the request its sequence number, lets fill complete its
// Reply (allocating ids, taking a step) under the lock, stores it and wakes
// waiters. It returns the request id sent in the Request-Id header.
func (s *Server) record(req *Request, rep Reply, fill func(*Reply)) string {
	s.mu.Lock()
	req.Seq = len(s.requests) + 1
	if fill != nil {
		fill(&rep)
	}
	req.Reply = rep
	s.requests = append(s.requests, req)
	s.notifyLocked()
	s.mu.Unlock()

	if s.cfg.logf != nil {
		session := "" // no empty field in a log line: a probe has no session
		if req.SessionID != "" {
			session = " session=" + req.SessionID
		}
		s.cfg.logf("fakeapi: #%d %s %s%s stream=%v kind=%s -> %d %s",
			req.Seq, req.Method, req.Path, session, req.Stream, req.Kind, rep.Status, rep.Step)
	}
	return "req_fake_" + s.cfg.idPrefix + strconv.Itoa(req.Seq)
}

func (s *Server) addStall(req *Request) {
	info := StallInfo{Request: req, Time: time.Now()}
	s.mu.Lock()
	s.stalls = append(s.stalls, info)
	s.notifyLocked()
	s.mu.Unlock()
	select {
	case s.stalled <- info:
	default: // nobody reading and the buffer is full; WaitStalls still sees it
	}
}

func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// nextStepLocked picks the step for a conversation request of session id:
// from the session's own script if it has one, else from the default one;
// the fallback when that is exhausted.
func (s *Server) nextStepLocked(req *Request) (step Step, exhausted bool) {
	q, id := &s.def, req.SessionID
	switch sq, ok := s.sessions[id]; {
	case req.AgentID != "" && s.hasSubagents:
		q = &s.subagents
	case ok && id != "":
		q = sq
	}
	if st, ok := q.next(); ok {
		return st, false
	}
	return s.cfg.fallback, true
}

// resolveLocked allocates the ids a step's answer needs.
func (s *Server) resolveLocked(step Step, req *Request) reply {
	s.nextMsg++
	rep := reply{
		msgID: "msg_" + s.cfg.idPrefix + strconv.Itoa(s.nextMsg),
		model: req.Parsed.Model,
		usage: step.usageOrDefault(),
		stop:  step.stop(),
	}
	if rep.model == "" {
		rep.model = "claude-sonnet-4-5"
	}
	for _, b := range step.blocks {
		if b.thinking {
			thought, sig := b.text, fakeSignature
			rep.blocks = append(rep.blocks, block{Type: "thinking", Thinking: &thought, Signature: &sig})
			continue
		}
		if !b.toolUse {
			text := b.text
			rep.blocks = append(rep.blocks, block{Type: "text", Text: &text})
			continue
		}
		id := b.id
		if id == "" {
			s.nextTool++
			id = "toolu_" + s.cfg.idPrefix + strconv.Itoa(s.nextTool)
		}
		rep.blocks = append(rep.blocks, block{Type: "tool_use", ID: id, Name: b.name, Input: b.input})
	}
	return rep
}
