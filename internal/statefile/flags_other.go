//go:build !unix

package statefile

// Safe is 0 where the kernel has no such flags: malarun builds only for
// Linux and macOS (internal/platform says so, in one error).
const Safe = 0

// NoBlock is 0 here, as Safe is.
const NoBlock = 0
