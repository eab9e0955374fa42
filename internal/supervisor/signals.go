package supervisor

import (
	"os"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/malarun/malarun/internal/configkey"
)

// shutdown is how malarun was asked to stop: the first signal stops the
// run gracefully within shutdown_grace, a second (or the grace's end)
// kills the tree at once (docs/design.md §D7).
type shutdown struct {
	interrupted os.Signal
	hurry       chan struct{} // closed by a second signal: kill at once
	hurryOnce   sync.Once
	// shutdownTimer hurries the stop once shutdown_grace has passed since the first signal.
	shutdownTimer *time.Timer
}

// interrupt handles a shutdown signal. It reports true for the first signal
// (stop gracefully); any later one closes hurry (kill the tree now).
func (r *shutdown) interrupt(sig os.Signal, log zerolog.Logger, grace time.Duration) bool {
	if r.interrupted == nil {
		r.interrupted = sig
		log.Warn().Str("signal", sig.String()).Stringer(configkey.ShutdownGrace, grace).Msg("stopping the run; a second signal kills it at once")
		// Whatever is being stopped, and for whatever reason, the tree is
		// killed once shutdown_grace is over: CI runners kill malarun soon.
		r.shutdownTimer = time.AfterFunc(grace, func() { r.hurryNow("shutdown_grace is over", log) })
		return true
	}
	r.hurryNow("second signal "+sig.String(), log)
	return false
}

// hurryNow makes every stop in progress or to come skip the rest of its grace.
func (r *shutdown) hurryNow(why string, log zerolog.Logger) {
	r.hurryOnce.Do(func() {
		log.Warn().Str("why", why).Msg("killing the process tree now")
		close(r.hurry)
	})
}
