package proc_test

import (
	"testing"

	"github.com/malarun/malarun/internal/proc"
)

// What a run's cgroup costs at its open and close: mkdir, the check
// process (admits), cgroup.kill and rmdir.
func BenchmarkCgroupOpenAndRemove(b *testing.B) {
	name := proc.CgroupName(b.Name())
	for b.Loop() {
		cg, err := proc.NewCgroup(name)
		if err != nil {
			b.Skipf("SKIPPED: no cgroup can be made here: %v", err)
		}
		if err := cg.Remove(); err != nil {
			b.Fatal(err)
		}
	}
}

// The check alone.
func BenchmarkCgroupAdmits(b *testing.B) {
	cg, err := proc.NewCgroup(proc.CgroupName(b.Name()))
	if err != nil {
		b.Skipf("SKIPPED: no cgroup can be made here: %v", err)
	}
	defer cg.Remove()
	for b.Loop() {
		if err := cg.Admits(); err != nil {
			b.Fatal(err)
		}
	}
}
