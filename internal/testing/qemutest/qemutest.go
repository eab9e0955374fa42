// Package qemutest lets a test skip, loudly and with a reason, what
// qemu-user cannot do when `make test-arm64-qemu` runs the linux/arm64 test
// binaries through qemu-aarch64-static on an amd64 machine (issue 22).
//
// A skip needs two things: the make target's claim (EnvUnder=1) and the
// machine's confirmation that the binary really is emulated. The claim
// alone could hide tests in a native run (a stray variable), so a claim
// the machine denies fails the test instead. Emulation without the claim
// (a developer's binfmt_misc setup, where re-executing the test binary
// works) skips nothing: those tests run and show what they show.
package qemutest

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Environment variables set by make test-arm64-qemu.
const (
	// EnvUnder is "1" when the make target runs the test binary under qemu-user.
	EnvUnder = "MALARUN_UNDER_QEMU"
	// EnvSkips names a file where every skip appends "TestName<TAB>reason",
	// so the make target lists them: go test shows a skip's reason only
	// with -v, among thousands of lines.
	EnvSkips = "MALARUN_QEMU_SKIPS"
)

// Reasons shared by many tests.
const (
	// Reexec: qemu-aarch64-static is invoked directly, without binfmt_misc,
	// so the kernel cannot exec an arm64 ELF: starting the test binary
	// itself as a child (the fake claude, a miniature malarun) fails with
	// ENOEXEC. Worse, under Debian 12's qemu 7.2 the forked child of such a
	// failed exec can deadlock inside qemu while other threads fork too, so
	// the test hangs instead of failing: it must skip before it tries.
	Reexec = "starts the test binary itself as a child: without binfmt_misc the kernel cannot exec an arm64 binary (ENOEXEC; with qemu 7.2 the failed fork can even hang)"
	// NoSubreaper: qemu 7.2 does not emulate PR_SET_CHILD_SUBREAPER.
	NoSubreaper = "qemu 7.2 rejects prctl(PR_SET_CHILD_SUBREAPER) with EINVAL, so the test process cannot adopt orphans"
)

// SkipReexec skips t under qemu-user for the reason Reexec. Call it before
// the test starts any child that is the test binary itself.
func SkipReexec(t testing.TB) {
	t.Helper()
	SkipUnderQEMU(t, Reexec)
}

// SkipUnderQEMU skips t, saying why, when the make target runs it under
// qemu-user and the machine confirms it; elsewhere it does nothing.
func SkipUnderQEMU(t testing.TB, reason string) {
	t.Helper()
	if !Under(t) {
		return
	}
	if path := os.Getenv(EnvSkips); path != "" {
		if err := appendLine(path, t.Name()+"\t"+reason+"\n"); err != nil {
			t.Fatalf("qemutest: cannot list the skip in %s=%s: %v", EnvSkips, path, err)
		}
	}
	t.Skipf("!!! SKIPPED under qemu-user (%s): %s !!!", evidence(), reason)
}

// Under reports whether the test binary runs under qemu-user as the make
// target says (EnvUnder=1). A claim the machine denies fails t.
func Under(t testing.TB) bool {
	t.Helper()
	claim := os.Getenv(EnvUnder)
	if claim == "" {
		return false
	}
	if claim != "1" {
		t.Fatalf("qemutest: %s=%q, want 1 or nothing", EnvUnder, claim)
	}
	if evidence() == "" {
		t.Fatalf("qemutest: %s=1 but this %s binary runs natively (%s): unset it, or tests would skip for nothing",
			EnvUnder, runtime.GOARCH, nativeFacts())
	}
	return true
}

// evidence says what shows that this process is emulated, or "" when
// nothing does; read once.
var evidence = sync.OnceValue(func() string {
	return emulated(runtime.GOARCH, readTrim("/proc/self/comm"), readTrim("/proc/sys/kernel/arch"))
})

// emulated judges from facts that qemu-user does not rewrite (it fakes
// uname, /proc/self/exe, /proc/self/stat and /proc/self/cmdline for the
// guest, but not these): the kernel names the process after the file it
// really executed, qemu-aarch64-static, truncated to 15 bytes; and
// kernel.arch is the real machine's, where uname says the guest's.
func emulated(goarch, comm, kernelArch string) string {
	if strings.HasPrefix(comm, "qemu-") {
		return "the kernel runs " + comm
	}
	if want, ok := unameArch[goarch]; ok && kernelArch != "" && kernelArch != want {
		return fmt.Sprintf("a %s binary on a %s kernel", goarch, kernelArch)
	}
	return ""
}

// unameArch is the kernel's name for each GOARCH this project builds for.
var unameArch = map[string]string{"amd64": "x86_64", "arm64": "aarch64"}

func nativeFacts() string {
	return fmt.Sprintf("/proc/self/comm %q, kernel.arch %q",
		readTrim("/proc/self/comm"), readTrim("/proc/sys/kernel/arch"))
}

func readTrim(path string) string {
	b, _ := os.ReadFile(path)
	return strings.TrimSpace(string(b))
}

// appendLine appends line with one write on an O_APPEND file, so tests
// running in parallel do not interleave their lines.
func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
