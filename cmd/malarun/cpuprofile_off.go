//go:build !cpuprofile

package main

// startProfile profiles nothing: the profiling build is -tags cpuprofile.
func startProfile() (stop func()) { return func() {} }
