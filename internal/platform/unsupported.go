//go:build !linux && !darwin

package platform

// The one error a build for another kernel shows. malarun needs process
// groups, a process table it can read and kill(2): build it with GOOS=linux
// or GOOS=darwin.
const supported = malarun_builds_only_for_GOOS_linux_or_darwin
