package ui

import "strings"

// MarkdownCode is s as one inline code span: cleaned to one line, with a
// backtick fence longer than any run of backticks in it (padded with a
// space when it begins or ends with one, as CommonMark asks). A code span
// renders its content literally: no HTML, link, mention or emphasis, so
// text from outside (the model's, a record's) stays text in a pull-request
// comment or a step summary.
func MarkdownCode(s string) string {
	s = Clean(s, 300)
	if s == "" {
		return "` `"
	}
	fence := strings.Repeat("`", LongestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// LongestRun is the length of the longest run of c in s.
func LongestRun(s string, c byte) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}
