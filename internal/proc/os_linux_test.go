package proc

import "testing"

func TestTicksOfUptime(t *testing.T) {
	for up, want := range map[string]uint64{
		"0.29": 29, "12345.67": 1234567, "0.00": 0, "7.1": 0, "7": 0, "x.10": 0, "1.x0": 0, "": 0, "-1.00": 0,
	} {
		if got := ticksOf(up); got != want {
			t.Errorf("ticksOf(%q) = %d, want %d", up, got, want)
		}
	}
	// The present is never before this process's own start.
	if st, err := StartTime(Self().Pid); err != nil || startTimeNow() < st {
		t.Errorf("now %d ticks, before this process's start %d (%v)", startTimeNow(), st, err)
	}
}
