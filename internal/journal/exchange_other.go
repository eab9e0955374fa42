//go:build !linux

package journal

import "golang.org/x/sys/unix"

// exchange is refused (ENOSYS), so saves make a new file and rename it
// (writeAtomic). darwin has a swap, renamex_np, left unused: malarun has
// not been run there yet.
func exchange(a, b string) error { return unix.ENOSYS }
