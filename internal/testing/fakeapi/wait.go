package fakeapi

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// ErrClosed is returned by the Wait methods when the server closes before
// their condition holds: no request can arrive any more.
var ErrClosed = errors.New("fakeapi: server closed")

// Requests returns every request received so far, in arrival order.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// ConversationRequests returns the requests that consumed (or tried to
// consume) a scripted step, in order.
func (s *Server) ConversationRequests() []*Request {
	return s.ofKind(KindConversation)
}

// SideRequests returns the requests answered with a canned side reply.
func (s *Server) SideRequests() []*Request {
	return s.ofKind(KindSide)
}

func (s *Server) ofKind(k Kind) []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return filterKind(s.requests, k)
}

func filterKind(reqs []*Request, k Kind) []*Request {
	var out []*Request
	for _, r := range reqs {
		if r.Kind == k {
			out = append(out, r)
		}
	}
	return out
}

// Stalls returns the stalls begun so far, in order.
func (s *Server) Stalls() []StallInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.stalls)
}

// Stalled delivers a StallInfo each time a [Stall] step has sent
// message_start and begins to hold its connection. It holds up to 64
// unread stalls and drops later ones rather than block a request; use
// [Server.WaitStalls] where no stall may be missed.
func (s *Server) Stalled() <-chan StallInfo { return s.stalled }

// Problems reports what a test running the CLI usually wants to fail on:
// conversation requests that found the script exhausted, and requests
// answered 404 or 400 (an endpoint or body this fake does not know).
// It returns nil when there are none.
func (s *Server) Problems() error {
	var errs []error
	for _, r := range s.Requests() {
		switch {
		case r.Reply.Exhausted:
			errs = append(errs, fmt.Errorf("request #%d (session %s): script exhausted, served %s",
				r.Seq, r.SessionID, r.Reply.Step))
		case r.Reply.Status == 404 || (r.Reply.Status == 400 && r.Kind == KindOther):
			errs = append(errs, fmt.Errorf("request #%d: %s %s answered %d (%s)",
				r.Seq, r.Method, r.Path, r.Reply.Status, r.Reply.Step))
		}
	}
	return errors.Join(errs...)
}

// WaitRequests blocks until at least n requests (of any kind) have been
// received and returns them all. It fails when ctx ends or the server
// closes first.
func (s *Server) WaitRequests(ctx context.Context, n int) ([]*Request, error) {
	var out []*Request
	err := s.waitFor(ctx, func() bool {
		if len(s.requests) < n {
			return false
		}
		out = slices.Clone(s.requests)
		return true
	})
	return out, err
}

// WaitConversationRequests blocks until at least n conversation requests
// have been received (their step is already chosen, though the answer may
// still be on its way) and returns them all.
func (s *Server) WaitConversationRequests(ctx context.Context, n int) ([]*Request, error) {
	var out []*Request
	err := s.waitFor(ctx, func() bool {
		out = filterKind(s.requests, KindConversation)
		return len(out) >= n
	})
	if err != nil {
		out = nil
	}
	return out, err
}

// WaitStalls blocks until at least n stalls have begun and returns them all.
func (s *Server) WaitStalls(ctx context.Context, n int) ([]StallInfo, error) {
	var out []StallInfo
	err := s.waitFor(ctx, func() bool {
		if len(s.stalls) < n {
			return false
		}
		out = slices.Clone(s.stalls)
		return true
	})
	return out, err
}

// waitFor re-evaluates cond, under the lock, each time the record grows,
// until it holds.
func (s *Server) waitFor(ctx context.Context, cond func() bool) error {
	for {
		s.mu.Lock()
		ok := cond()
		changed := s.changed
		s.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("fakeapi: waiting: %w", context.Cause(ctx))
		case <-s.closing:
			s.mu.Lock()
			ok = cond()
			s.mu.Unlock()
			if ok {
				return nil
			}
			return ErrClosed
		}
	}
}
