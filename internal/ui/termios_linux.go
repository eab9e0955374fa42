package ui

import "golang.org/x/sys/unix"

// ioctlReadTermios reads a terminal's settings: TCGETS on Linux, TIOCGETA
// on macOS (termios_darwin.go); TerminalFd asks it to tell a terminal.
const ioctlReadTermios = unix.TCGETS
