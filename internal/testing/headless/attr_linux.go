package headless

import "syscall"

// browserAttr: the browser in its own group, killed by the kernel if the
// test process dies.
func browserAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
