package ui

import "golang.org/x/sys/unix"

// ioctlReadTermios: see termios_linux.go.
const ioctlReadTermios = unix.TIOCGETA
