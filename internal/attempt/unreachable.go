package attempt

import (
	"time"

	"github.com/malarun/malarun/internal/endpoint"
)

// ProbeEvery is how often the API's address is looked at again while
// every look finds it certainly unreachable and the window is not over.
const ProbeEvery = 5 * time.Second

// unreachable is what the looks at the API's address found so far: a
// certain cause must hold, look after look, for Limits.UnreachableWindow
// before the attempt stops (issue 31: a gateway that opens its port a few
// seconds after malarun starts was an exit 10 at the first look).
type unreachable struct {
	since  time.Time // the first certain finding of the current streak (zero: none)
	lookAt time.Time // when to look again (zero: no look pending)
}

// onProbed takes in a look's finding: a certain cause starts or extends a
// streak, and the attempt stops once the streak spans the window; any
// other finding (the address answers, or cannot be judged) ends the
// streak and leaves the CLI's retries to go on.
func (s *State) onProbed(f endpoint.Finding, now time.Time) Effects {
	if s.stopped != StopNone {
		return Effects{}
	}
	if !endpoint.Judge(s.talked, f) {
		s.unreach = unreachable{}
		return Effects{}
	}
	if s.unreach.since.IsZero() {
		s.unreach.since = now
	}
	s.cause = f
	left := s.lim.UnreachableWindow - now.Sub(s.unreach.since)
	if left <= 0 {
		return s.stop(StopUnreachable, KillGrace)
	}
	s.unreach.lookAt = now.Add(min(left, ProbeEvery))
	return Effects{}
}

// lookAgain asks for the next look when its time has come.
func (s *State) lookAgain(now time.Time) Effects {
	if s.unreach.lookAt.IsZero() || now.Before(s.unreach.lookAt) {
		return Effects{}
	}
	s.unreach.lookAt = time.Time{}
	return Effects{Probe: true}
}
