//go:build !unix

package statefile

// safe is 0 where the kernel has no such flags: malarun builds only for
// Linux and macOS (internal/platform says so, in one error).
const safe = 0

// noBlock is 0 here, as safe is.
const noBlock = 0
