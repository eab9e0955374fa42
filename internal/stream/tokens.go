package stream

// Tokens are token counts: the usage of one API call (an assistant
// message), of a result line (cumulative over the session, or the turns
// since the previous result; see docs/design.md §F5), or a sum of them.
// It is malarun's one type for tokens; the JSON is the one form every
// output spells them in (the --json report, a finished line of the
// timeline and --events, malarun show, malarun summary). The Go names are
// the CLI's (input_tokens, ...).
type Tokens struct {
	InputTokens              int64 `json:"input"`
	OutputTokens             int64 `json:"output"`
	CacheCreationInputTokens int64 `json:"cache_creation_input"`
	CacheReadInputTokens     int64 `json:"cache_read_input"`
}

// maxTokenSum caps every count Add makes: 2^53-1, the largest integer a
// JSON reader that holds numbers as float64 (JavaScript, jq) reads back
// exactly, so a count malarun prints is never rounded by its reader. No
// run comes near it (9007 results at the decoder's bound of maxTokens per
// count), and the four counts of a sum added together stay far inside
// int64.
const maxTokenSum = 1<<53 - 1

// Add is t + u, count by count, each kept within [0, maxTokenSum]: the
// one sum of token counts (a run's, an attempt's, a state dir's). A
// count below 0 (read from a planted file; the decoder never gives one)
// counts as 0, one above the cap as the cap, and a sum saturates there
// rather than wrapping.
func (t Tokens) Add(u Tokens) Tokens {
	return Tokens{
		InputTokens:              addCount(t.InputTokens, u.InputTokens),
		OutputTokens:             addCount(t.OutputTokens, u.OutputTokens),
		CacheCreationInputTokens: addCount(t.CacheCreationInputTokens, u.CacheCreationInputTokens),
		CacheReadInputTokens:     addCount(t.CacheReadInputTokens, u.CacheReadInputTokens),
	}
}

func addCount(a, b int64) int64 {
	a, b = min(max(a, 0), maxTokenSum), min(max(b, 0), maxTokenSum)
	return min(a+b, maxTokenSum) // each within 2^53: the sum cannot overflow
}

// Occupancy is the context the conversation takes up after this call:
// everything sent (fresh, cache-created, cache-read) plus what was produced.
// The decoder keeps each count within [0, maxTokens], so the sum cannot
// overflow.
func (t Tokens) Occupancy() int64 {
	return t.InputTokens + t.CacheCreationInputTokens + t.CacheReadInputTokens + t.OutputTokens
}
