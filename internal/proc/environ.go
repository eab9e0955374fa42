package proc

import (
	"bytes"
	"encoding/binary"
)

// hasEntry reports whether block, environment entries each ended by a NUL
// (as /proc/<pid>/environ gives them), holds the entry env exactly: a
// longer value that starts with env's does not count.
func hasEntry(block []byte, env string) bool {
	if env == "" {
		return false
	}
	for len(block) > 0 {
		entry, rest, _ := bytes.Cut(block, []byte{0})
		if string(entry) == env {
			return true
		}
		block = rest
	}
	return false
}

// procArgsEnv returns the environment block out of darwin's
// KERN_PROCARGS2 buffer (xnu bsd/kern/kern_sysctl.c): a 32-bit argc in
// the machine's byte order, the executable path, NUL padding, argc
// NUL-ended arguments, then the environment's NUL-ended entries (and,
// after them, the kernel's own "apple" strings, which hasEntry's exact
// match never takes for a marker). It lives here, not in os_darwin.go, so
// that its tests run on every kernel. A buffer too short for what argc
// promises gives no environment rather than arguments read as one. An
// empty argv[0] cannot be told from the padding: its process's first
// environment entry is then read as an argument, so such a process can be
// missed, never a stranger taken.
func procArgsEnv(buf []byte) []byte {
	if len(buf) < 4 {
		return nil
	}
	argc := int(binary.NativeEndian.Uint32(buf))
	rest := buf[4:]
	path := bytes.IndexByte(rest, 0)
	if path < 0 {
		return nil
	}
	rest = rest[path:]
	for len(rest) > 0 && rest[0] == 0 { // the path's NUL and the padding
		rest = rest[1:]
	}
	for i := 0; i < argc; i++ {
		end := bytes.IndexByte(rest, 0)
		if end < 0 {
			return nil
		}
		rest = rest[end+1:]
	}
	return rest
}
