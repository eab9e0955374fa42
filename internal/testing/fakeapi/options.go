package fakeapi

// Option configures a Server at construction.
type Option func(*config)

type config struct {
	steps    []Step
	sessions map[string][]Step
	// subagents answers the sub-agents' requests, when set (WithSubagentScript).
	subagents []Step
	fallback  Step
	classify  func(*Request) Kind
	idPrefix  string
	logf      func(format string, args ...any)
	// responder answers chosen conversation requests without the script.
	responder func(*Request) (Step, bool)
	// then answers the conversation requests that find the script spent.
	then func(*Request) Step
}

func defaultConfig() config {
	return config{
		sessions: map[string][]Step{},
		fallback: Text(ExhaustedText),
		classify: Classify,
	}
}

// ExhaustedText is the reply to a conversation request that finds the
// script empty, unless [WithFallback] says otherwise. The CLI then ends its
// run normally with this as its result, so a test should check
// [Server.Problems] rather than rely on the run failing.
const ExhaustedText = "fakeapi: script exhausted"

// WithScript appends steps to the default script, which answers the
// conversation requests of every session that has no script of its own.
func WithScript(steps ...Step) Option {
	return func(c *config) { c.steps = append(c.steps, steps...) }
}

// WithSessionScript gives the session with this id (the
// X-Claude-Code-Session-Id header; set it up front with the CLI's
// --session-id) its own script. Its requests then never use the default
// script, even once their own is exhausted.
func WithSessionScript(sessionID string, steps ...Step) Option {
	return func(c *config) { c.sessions[sessionID] = append(c.sessions[sessionID], steps...) }
}

// WithSubagentScript answers the requests of the CLI's sub-agents (those
// with an X-Claude-Code-Agent-Id header, Request.AgentID: a Task or Agent
// call's, on 2.1.197 and 2.1.332, docs/design.md §F35) from a script of
// their own, in the order they arrive, whatever their session; the main
// agent's requests never take from it. Without it every conversation
// request takes from the session's or the default script, as before.
func WithSubagentScript(steps ...Step) Option {
	return func(c *config) { c.subagents = append(c.subagents, steps...) }
}

// WithFallback replaces the reply served when a script is exhausted (by
// default Text(ExhaustedText)). The request is still counted as exhausted.
func WithFallback(s Step) Option {
	return func(c *config) { c.fallback = s }
}

// WithThen answers every conversation request that finds its script
// spent with then's step, instead of the fallback: the script's steps
// first (a fault, say), then a model of the caller's ([FollowPrompt]).
// Such a request is not counted as exhausted.
func WithThen(then func(*Request) Step) Option {
	return func(c *config) { c.then = then }
}

// WithClassifier replaces [Classify] for requests to /v1/messages whose
// body is JSON. It may wrap Classify.
func WithClassifier(f func(*Request) Kind) Option {
	return func(c *config) { c.classify = f }
}

// WithIDPrefix puts a prefix into every id the server allocates
// (toolu_<prefix>1, msg_<prefix>1). Two servers that serve one conversation
// in turn (a run, then its --resume against a fresh server) need different
// prefixes, or the resumed conversation would hold two toolu_1.
func WithIDPrefix(prefix string) Option {
	return func(c *config) { c.idPrefix = prefix }
}

// WithLogf logs one line per request (e.g. t.Logf). It is called from
// request goroutines, never after Close has returned.
func WithLogf(logf func(format string, args ...any)) Option {
	return func(c *config) { c.logf = logf }
}

// WithResponder answers a conversation request with respond's step when it
// reports true, without consuming a scripted step; otherwise the script
// answers. Use it for requests recognised by their content, such as
// malarun's checkpoint request, whose place in the order of requests can
// race with a process being killed.
func WithResponder(respond func(*Request) (Step, bool)) Option {
	return func(c *config) { c.responder = respond }
}
