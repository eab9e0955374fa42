package supervisor

import (
	"math"

	"github.com/malarun/malarun/internal/stream"
)

// addUsage sums token counts. The decoder keeps each count of a result
// within [0, stream.MaxTokens], so a sum passes int64 only after nine
// million results at that bound; a CLI printing that many still gets a
// count that stops at math.MaxInt64 rather than wrapping negative.
func addUsage(a, b stream.Usage) stream.Usage {
	return stream.Usage{InputTokens: addTokens(a.InputTokens, b.InputTokens), OutputTokens: addTokens(a.OutputTokens, b.OutputTokens),
		CacheCreationInputTokens: addTokens(a.CacheCreationInputTokens, b.CacheCreationInputTokens),
		CacheReadInputTokens:     addTokens(a.CacheReadInputTokens, b.CacheReadInputTokens)}
}

// addTokens adds two counts that are never negative, saturating.
func addTokens(a, b int64) int64 {
	if b > math.MaxInt64-a {
		return math.MaxInt64
	}
	return a + b
}
