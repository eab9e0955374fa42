//go:build unix

package statefile

import "syscall"

// safe are the open flags that keep a planted file from holding or
// redirecting an open: no blocking on a FIFO, no final symbolic link.
const safe = syscall.O_NONBLOCK | syscall.O_NOFOLLOW

// noBlock is safe without O_NOFOLLOW, for the files the user names.
const noBlock = syscall.O_NONBLOCK
