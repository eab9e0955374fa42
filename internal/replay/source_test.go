package replay

import (
	"regexp"
	"strconv"
	"testing"
)

// A run folder's transcripts are named as the regular expression they
// replaced named them: attempt-N.jsonl, N from 1 to 999999 without a
// leading zero.
func FuzzTranscriptNumberAsTheRegexpDid(f *testing.F) {
	for _, s := range []string{"attempt-1.jsonl", "attempt-0.jsonl", "attempt-01.jsonl", "attempt-999999.jsonl", "attempt-1000000.jsonl",
		"attempt-.jsonl", "attempt-1.jsonl.tmp", "xattempt-1.jsonl", "attempt-1a.jsonl", "attempt-1.stderr"} {
		f.Add(s)
	}
	re := regexp.MustCompile(`^attempt-([1-9][0-9]{0,5})\.jsonl$`)
	f.Fuzz(func(t *testing.T, name string) {
		want := 0
		if m := re.FindStringSubmatch(name); m != nil {
			want, _ = strconv.Atoi(m[1])
		}
		if got := transcriptNumber(name); got != want {
			t.Errorf("transcriptNumber(%q) = %d, the regexp gave %d", name, got, want)
		}
	})
}
