package stream

import "testing"

func TestUnfamiliar(t *testing.T) {
	for _, tc := range []struct {
		ev   Event
		want string
	}{
		{Event{Type: "assistant"}, ""},
		{Event{Type: "system", Subtype: "init"}, ""},
		{Event{Type: "system", Subtype: "background_tasks_changed"}, ""},
		{Event{Type: "result", Subtype: "error_new_thing"}, ""}, // attempt.UnknownResult's
		{Event{Type: "system", Subtype: "memory_swept"}, "system subtype memory_swept"},
		{Event{Type: "system"}, "system subtype "},
		{Event{Type: "telepathy"}, "type telepathy"},
		{Event{Type: ""}, "type "},
		{Event{Kind: KindMalformed}, ""}, // undecodable: warned as such
	} {
		if got := Unfamiliar(tc.ev); got != tc.want {
			t.Errorf("Unfamiliar(%+v) = %q, want %q", tc.ev, got, tc.want)
		}
	}
}
