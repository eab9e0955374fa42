//go:build !linux

package headless

import "syscall"

// browserAttr: the browser in its own group. No parent-death signal here:
// Browser.Close ends it, and a killed test process leaves it to exit on
// its closed pipe (--remote-debugging-pipe).
func browserAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
