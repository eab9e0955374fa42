package testchild

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
)

// countTerm is the CountTerm behaviour: a fake CLI that, like many real
// programs (Node ones included), would take a second SIGTERM as "exit now";
// here it only counts them, so a test can see how many a stop sends.
func countTerm(println func(string)) {
	var late sync.Once
	countTerms(RoleChild, func() {
		if os.Getenv(EnvTermLate) != "" {
			late.Do(startLateCounter)
		}
	})
	pid := startCounter(RoleGrandchild)
	println(InitLine)
	println(GrandchildLine(pid))
	block()
}

// countTerms logs every SIGTERM the process receives as role, then calls
// then (when not nil). A handler (Notify), not Ignore, so that each receipt
// is seen. Signals that arrive while one is still pending merge into one
// (in the kernel and in os/signal), so a count is a lower bound: a stop
// that repeats SIGTERM every few milliseconds still shows as many.
func countTerms(role string, then func()) {
	c := make(chan os.Signal, 1024)
	signal.Notify(c, syscall.SIGTERM)
	go func() {
		for range c {
			logTerm(role, os.Getpid())
			if then != nil {
				then()
			}
		}
	}()
}

// logTerm appends one TermLine to EnvTermLog at once: the process may be
// SIGKILLed at any moment after. One write with O_APPEND keeps lines whole
// when several processes log to the same file.
func logTerm(role string, pid int) {
	f, err := os.OpenFile(os.Getenv(EnvTermLog), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testchild:", err)
		os.Exit(94)
	}
	f.WriteString(TermLine(role, pid))
	f.Close()
}

// startCounter starts a counting grandchild in a new session (as the Bash
// tool does), outside the child's process group, and waits until it counts.
func startCounter(role string) int {
	cmd := counterCommand(role)
	out, err := cmd.StdoutPipe()
	if err != nil {
		os.Exit(97)
	}
	if err := cmd.Start(); err != nil {
		os.Exit(97)
	}
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		os.Exit(96)
	}
	return cmd.Process.Pid
}

// startLateCounter starts a counting grandchild while the stop is under
// way, so only a later walk of the tree can find it. It may be found, and
// sent SIGTERM, before its handler is in place (a Go program cannot start
// with SIGTERM ignored or blocked: the runtime installs its own handler
// and unblocks it): it then dies of that SIGTERM, and this process logs
// the receipt on its behalf. Either way each SIGTERM it gets is logged once.
func startLateCounter() {
	cmd := counterCommand(RoleLate)
	if err := cmd.Start(); err != nil {
		os.Exit(97)
	}
	go func() {
		cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM {
			logTerm(RoleLate, cmd.Process.Pid)
		}
	}()
}

func counterCommand(role string) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), EnvBehaviour+"="+termCounter, envTermRole+"="+role, EnvArgsFile+"=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd
}
