package journal

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"time"

	"github.com/malarun/malarun/internal/record"
)

// The ids malarun draws: the record package checks them (record.ValidRunID,
// record.ValidSessionID) and keeps no random source of its own.

// NewRunID names a run started at now: sortable by time, and unique enough
// with its random part (a folder of that name is created exclusively).
func NewRunID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux
	return record.RunID(now, b)
}

// NewUUID returns a random (version 4) UUID in lower-case hex, the form
// record.ValidSessionID accepts: malarun's session ids, and each invocation's
// telemetry instance id.
func NewUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on Linux
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return strings.Join([]string{h[:8], h[8:12], h[12:16], h[16:20], h[20:]}, "-")
}
