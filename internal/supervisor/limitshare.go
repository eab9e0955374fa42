package supervisor

import (
	"cmp"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/malarun/malarun/internal/environ"
	"github.com/malarun/malarun/internal/limitstore"
	"github.com/malarun/malarun/internal/usagelimit"
)

// The usage-limit facts the run's decisions need from the outside world
// (docs/design.md §D10): limits other malaruns of this account met, the
// CLI's time zone; and the sharing of a limit this one met. What to do
// about a limit is internal/run's decision.

// childZone is the time zone the CLI prints a reset in when it names none:
// its TZ, else this machine's local zone (the CLI runs on it too).
func childZone(env []string) *time.Location {
	tz, set := environ.Lookup(env, "TZ")
	if !set {
		return time.Local
	}
	loc, err := time.LoadLocation(strings.TrimPrefix(tz, ":"))
	if err != nil {
		return nil // a reset printed without a zone stays unknown rather than misread
	}
	return loc
}

// limitKey names the account the CLI bills, for the machine-wide file: its
// API key, else its OAuth token, with the API's address (a fake or a proxy
// API has limits of its own); "default" is the CLI's own stored login.
func limitKey(env []string) string {
	cred := cmp.Or(environ.Get(env, "ANTHROPIC_API_KEY"), environ.Get(env, "CLAUDE_CODE_OAUTH_TOKEN"))
	if base := environ.Get(env, "ANTHROPIC_BASE_URL"); base != "" {
		cred += "\x00" + base
	}
	return limitstore.Key(cred)
}

// shareLimit writes a waitable limit with a known reset where the other
// malaruns of this state directory and account (cfg's) will find it.
func shareLimit(cfg *Config, log zerolog.Logger, l usagelimit.Limit) {
	if !l.Waitable || !l.Known() {
		return
	}
	if err := (limitstore.Store{Dir: cfg.StateDir}).Write(limitKey(cfg.Env), l); err != nil {
		log.Warn().Err(err).Msg("could not share the usage limit with other malaruns")
	}
}

// sharedLimit is another malarun's note of a usage limit for this
// account (zero: none), for run.Begin, which waits for it or for the
// record's own retry_at (own), whichever resets later.
func sharedLimit(cfg *Config, log zerolog.Logger, own time.Time, now time.Time) usagelimit.Limit {
	store := limitstore.Store{Dir: cfg.StateDir, Refused: func(err error) {
		log.Warn().Err(err).Msg("ignored and removed a file in the usage-limit folder that malarun did not write")
	}}
	shared, ok := store.Read(limitKey(cfg.Env), now)
	if !ok {
		return usagelimit.Limit{}
	}
	if shared.RetryAt.After(own) { // said when it resets later than the run's own (run.Taken: the record's)
		log.Info().Time("retry_at", shared.RetryAt).Str("limit_type", shared.Type).Msg("another malarun on this state directory met a usage limit for this account")
	}
	return shared
}
