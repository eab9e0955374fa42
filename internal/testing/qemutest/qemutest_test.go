package qemutest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestEmulatedJudgesFromFactsQEMUDoesNotRewrite(t *testing.T) {
	for _, c := range []struct {
		goarch, comm, kernelArch string
		want                     bool
	}{
		{"arm64", "qemu-aarch64-st", "x86_64", true}, // make test-arm64-qemu here
		{"arm64", "qemu-aarch64-st", "", true},       // a kernel without kernel.arch
		{"arm64", "proc.test", "x86_64", true},       // a qemu that hid its name
		{"arm64", "proc.test", "aarch64", false},     // a real arm64 machine
		{"amd64", "proc.test", "x86_64", false},      // CI's own run
		{"amd64", "proc.test", "", false},            // no /proc: macOS
		{"riscv64", "proc.test", "x86_64", false},    // unknown arch: the name only
	} {
		got := emulated(c.goarch, c.comm, c.kernelArch)
		if (got != "") != c.want {
			t.Errorf("emulated(%q, %q, %q) = %q, want emulated %v", c.goarch, c.comm, c.kernelArch, got, c.want)
		}
	}
}

// The variable is a claim; each test sets the machine's answer.
func TestClaimTheMachineDeniesFails(t *testing.T) {
	machineSays(t, "")
	t.Setenv(EnvUnder, "1")
	r := call(t, "some reason")
	if r.skipped != "" || !strings.Contains(r.fatal, "runs natively") {
		t.Errorf("got skip %q, fatal %q; want a failure naming the native run", r.skipped, r.fatal)
	}
}

func TestMalformedClaimFails(t *testing.T) {
	machineSays(t, "the kernel runs qemu-aarch64-st")
	t.Setenv(EnvUnder, "yes")
	if r := call(t, "some reason"); r.skipped != "" || !strings.Contains(r.fatal, "want 1 or nothing") {
		t.Errorf("got skip %q, fatal %q; want a failure", r.skipped, r.fatal)
	}
}

// Emulated without the claim (binfmt_misc, where re-exec works): no skip.
func TestNoClaimSkipsNothing(t *testing.T) {
	machineSays(t, "the kernel runs qemu-aarch64-st")
	t.Setenv(EnvUnder, "")
	if r := call(t, "some reason"); r.skipped != "" || r.fatal != "" {
		t.Errorf("got skip %q, fatal %q; want the test to go on", r.skipped, r.fatal)
	}
}

func TestConfirmedClaimSkipsLoudlyAndListsEachSkip(t *testing.T) {
	machineSays(t, "the kernel runs qemu-aarch64-st")
	t.Setenv(EnvUnder, "1")
	list := filepath.Join(t.TempDir(), "skips")
	t.Setenv(EnvSkips, list)
	r := call(t, "first reason")
	if r.fatal != "" || !strings.Contains(r.skipped, "!!! SKIPPED under qemu-user (the kernel runs qemu-aarch64-st): first reason !!!") {
		t.Errorf("got skip %q, fatal %q", r.skipped, r.fatal)
	}
	call(t, Reexec)
	b, err := os.ReadFile(list)
	if err != nil {
		t.Fatal(err)
	}
	want := "TestFake\tfirst reason\nTestFake\t" + Reexec + "\n"
	if string(b) != want {
		t.Errorf("skip list:\n%s\nwant:\n%s", b, want)
	}
}

// Against the real machine: natively the claim is absent; under make
// test-arm64-qemu it is present and Under must confirm it (or fail).
func TestTheRealMachineAnswers(t *testing.T) {
	under := Under(t)
	t.Logf("%s: under qemu-user: %v (%s=%q, evidence %q)", runtime.GOARCH, under, EnvUnder, os.Getenv(EnvUnder), evidence())
	if os.Getenv(EnvUnder) == "1" && !under {
		t.Error("the make target's claim was not confirmed")
	}
}

// machineSays makes evidence answer e for the rest of t.
func machineSays(t *testing.T, e string) {
	real := evidence
	evidence = func() string { return e }
	t.Cleanup(func() { evidence = real })
}

type result struct{ skipped, fatal string }

// call runs SkipUnderQEMU on a fake test in its own goroutine (a skip or a
// failure ends that goroutine, as in a real test) and says what it did.
func call(t *testing.T, reason string) result {
	f := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		SkipUnderQEMU(f, reason)
	}()
	<-done
	return f.result
}

type fakeTB struct {
	testing.TB
	result
}

func (f *fakeTB) Helper()      {}
func (f *fakeTB) Name() string { return "TestFake" }
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (f *fakeTB) Skipf(format string, args ...any) {
	f.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
