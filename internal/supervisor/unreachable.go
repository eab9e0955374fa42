package supervisor

import (
	"context"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/reach"
)

// talkedInRecord reports whether a recorded run already had an answer from
// the API (§D17): its session talked, it restarted on a full context, it
// wrote a checkpoint, or it cost something. A run resumed from such a
// record treats a connection failure as the network going away.
func talkedInRecord(rec journal.Record) bool {
	return rec.SessionTalked || rec.Continuations > 0 || rec.Checkpoint != "" || rec.CostUSD > 0
}

// startProbe looks at the API's address beside the attempt: the CLI goes
// on with its own retries meanwhile, and the attempt's loop receives the
// finding (at most one; the channel never blocks the probe). Ending ctx
// ends the look.
func (r *runner) startProbe(ctx context.Context, log zerolog.Logger) <-chan reach.Finding {
	log.Info().Str("api", r.target.Shown).Str("proxy", r.target.Proxy).
		Msg("claude got no answer from the API, and none yet in this run: looking at the address")
	out := make(chan reach.Finding, 1)
	go func() { out <- r.probe(ctx, r.target) }()
	return out
}

// unreachableReason says why the run stops, naming the address as it is
// safe to print (reach.Target.Shown) and the cause in malarun's words.
func unreachableReason(apiAt string, f reach.Finding) string {
	by := ""
	if f.FromCLI {
		by = " (claude's own error)"
	}
	return fmt.Sprintf("cannot reach the API at %s: %s%s; %s", apiAt, f, by, f.Hint())
}
