package proc

import (
	"slices"
	"strings"
	"testing"
)

// The guard acts only on notes that name a real group, its leader's start
// time and a marker entry; "done" withdraws one. Anything else is skipped,
// above all a group of 1, 0 or less: kill(-1) is every process.
func TestGuardReadsOnlyNotesItCanActOn(t *testing.T) {
	notes := strings.Join([]string{
		`{"op":"watch","pgid":500,"start":5,"marker":"M=a"}`,
		`{"op":"watch","pgid":600,"start":6,"marker":"M=b"}`,
		`{"op":"watch","pgid":700,"start":7,"marker":"M=c"}`,
		`{"op":"done","pgid":600}`,
		`not json`,
		`{"op":"watch","pgid":1,"start":5,"marker":"M=x"}`,
		`{"op":"watch","pgid":0,"start":5,"marker":"M=x"}`,
		`{"op":"watch","pgid":-7,"start":5,"marker":"M=x"}`,
		`{"op":"watch","pgid":800,"start":5,"marker":"no equals sign"}`,
		`{"op":"watch","pgid":900,"marker":"M=x"}`,
		`{"op":"kill","pgid":1000,"start":5,"marker":"M=x"}`,
		`{"op":"done","pgid":424242}`,
		`{"op":"watch","pgid":700,"start":7,"marker":"M=c"`, // cut short by malarun's death
	}, "\n")
	var got []int
	for pgid := range readNotes(strings.NewReader(notes)) {
		got = append(got, pgid)
	}
	slices.Sort(got)
	if !slices.Equal(got, []int{500, 700}) {
		t.Errorf("watched groups %v, want [500 700]", got)
	}
}
