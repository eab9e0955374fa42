package journal

import (
	"testing"

	"github.com/malarun/malarun/internal/record"
	"github.com/malarun/malarun/internal/testing/recordtest"
)

// BenchmarkSave is one save of a record of a run in progress: durable (a
// run's opening, an attempt's start, its end) and quick (a tool call's
// progress), the state directory on the disk the tests run on. Each save
// makes a new file in the folder: on a file system that spends
// time finding an inode (ext4 skips the recently freed ones), that is
// most of its cost.
func BenchmarkSave(b *testing.B) {
	for _, c := range []struct {
		name string
		save func(*Journal, record.Record) error
	}{{"durable", (*Journal).Save}, {"quick", (*Journal).SaveQuick}} {
		b.Run(c.name, func(b *testing.B) {
			j, err := Acquire(b.TempDir(), "issue-1", "pid 1")
			if err != nil {
				b.Fatal(err)
			}
			defer j.Release()
			r := recordtest.Sample()
			for b.Loop() {
				if err := c.save(j, r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
