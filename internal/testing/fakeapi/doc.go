// Package fakeapi is a fake Anthropic Messages API for tests that run the
// real Claude Code CLI with no network and no key: start a [Server], give
// the CLI ANTHROPIC_BASE_URL=<Server.URL> and any ANTHROPIC_API_KEY, and
// script what the "model" answers.
//
// A test lists [Step]s: [Text], [ToolUse] (or [Bash]), [Stall], [HTTPError]
// and its shorthands ([PromptTooLong], [AuthError], [RateLimited],
// [Overloaded]), [StreamError], optionally with usage and repeated with
// [Repeat]. Each streaming conversation request of the CLI consumes the
// next step, from the script of its session if it has one, else from the
// default script; once the script is exhausted a fallback text is served
// and the request is flagged, so the test can fail on [Server.Problems].
//
// Requests the CLI makes for itself (a session title, a compaction) are
// told apart by [Classify] and answered with canned replies that consume
// no step: otherwise whether the CLI happened to ask for a title would
// shift every scripted answer. See [Classify] for what the real CLI sends.
//
// Every request is recorded ([Server.Requests]) with its decoded body, so a
// test can assert on what the CLI sent (e.g. that a resumed conversation
// carries a tool_result), and can wait for the CLI to reach a point
// ([Server.WaitConversationRequests], [Server.WaitStalls]) instead of
// sleeping.
package fakeapi
