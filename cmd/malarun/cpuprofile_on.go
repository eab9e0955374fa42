//go:build cpuprofile

package main

import (
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
)

// startProfile writes a CPU profile of this malarun to the file
// MALARUN_CPUPROFILE names (a folder ending in "/": a file per malarun,
// named by its pid), in a build made with -tags cpuprofile (how a fleet's
// malaruns are profiled: docs/testing.md); stop ends it.
func startProfile() (stop func()) {
	path := os.Getenv("MALARUN_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	if strings.HasSuffix(path, "/") {
		path += strconv.Itoa(os.Getpid()) + ".prof"
	}
	f, err := os.Create(path)
	if err != nil {
		return func() {}
	}
	if pprof.StartCPUProfile(f) != nil {
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
