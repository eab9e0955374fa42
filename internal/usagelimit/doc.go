// Package usagelimit decides what to do when Claude Code stops on a usage
// or rate limit: when the limit resets (from the CLI's rate_limit_event, or
// from the text of its result line, which has no seconds and sometimes no
// date), whether waiting for that reset can help at all, and whether the
// wait fits in what is left of the run's limit_wait budget. A known reset
// is shared between the malaruns of one machine and one account by
// internal/limitstore, so a second run does not spend an attempt to learn
// what the first one knew.
//
// It is pure: the clock ("now"), the local time zone and the random source
// are passed in, so every decision is a row in a table test. Time zones come from the binary itself (time/tzdata), so a
// minimal container without zoneinfo still reads "resets 2am (Europe/Paris)".
package usagelimit

import _ "time/tzdata" // zone names in the CLI's texts must resolve without system zoneinfo
