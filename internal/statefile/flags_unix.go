//go:build unix

package statefile

import "syscall"

// Safe are the open flags that keep a planted file from holding or
// redirecting an open: no blocking on a FIFO, no final symbolic link.
const Safe = syscall.O_NONBLOCK | syscall.O_NOFOLLOW

// NoBlock is Safe without O_NOFOLLOW, for the files the user names.
const NoBlock = syscall.O_NONBLOCK
