package record

import (
	"encoding/hex"
	"strings"
	"time"
)

// runIDLayout is the time part of a run id; a dash and six hex digits follow.
const runIDLayout = "20060102T150405Z"

// RunID names a run started at now: sortable by its time, then random (the
// driver draws random: journal.NewRunID).
func RunID(now time.Time, random [3]byte) string {
	return now.UTC().Format(runIDLayout) + "-" + hex.EncodeToString(random[:])
}

// ValidRunID reports whether id is of the form RunID makes.
func ValidRunID(id string) bool {
	stamp, suffix, ok := strings.Cut(id, "-")
	if !ok || len(suffix) != 6 || !isLowerHex(suffix) {
		return false
	}
	_, err := time.Parse(runIDLayout, stamp)
	return err == nil && len(stamp) == len(runIDLayout)
}

// ValidSessionID reports whether id looks like the CLI's session ids and
// malarun's own (`--session-id`, journal.NewUUID): a UUID in lower-case
// hex. Only such ids are ever passed to claude or kept: a session id
// becomes the word after --resume, and an id such as
// "--dangerously-skip-permissions" would be a flag.
func ValidSessionID(id string) bool {
	if len(id) != 36 {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch i {
		case 8, 13, 18, 23:
			if id[i] != '-' {
				return false
			}
		default:
			if !isLowerHex(id[i : i+1]) {
				return false
			}
		}
	}
	return true
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return s != ""
}

// validSHA256 reports whether s is a SHA-256 in lower-case hex.
func validSHA256(s string) bool { return len(s) == 64 && isLowerHex(s) }
