//go:build !linux

package proc_test

// runKernelHelper: no kernel-specific helper programs here (the PID 1
// test needs Linux's PID namespaces).
func runKernelHelper() (int, bool) { return 0, false }
