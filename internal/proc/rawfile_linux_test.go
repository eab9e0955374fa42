package proc

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// The plain-system-call readers give what os gives: a folder's entries
// with their kinds (more than one getdents buffer of them), and a file's
// bytes up to the limit.
func TestRawReadersAgreeWithOs(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for i := range 400 { // names of 40-odd bytes: more than one 8 KiB buffer
		name := filepath.Join(dir, "entry-with-a-longish-name-to-fill-buffers-"+string(rune('a'+i%26))+string(rune('a'+i/26)))
		if i%3 == 0 {
			if err := os.Mkdir(name, 0o700); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(name, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		want = append(want, filepath.Base(name))
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	for round := range 2 { // read twice: each read starts at the folder's start
		got, err := readDirFD(fd)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range got {
			names = append(names, e.name)
			info, err := os.Lstat(filepath.Join(dir, e.name))
			if err != nil || info.IsDir() != e.folder {
				t.Errorf("round %d: %s: folder %v, os says %v (%v)", round, e.name, e.folder, info.IsDir(), err)
			}
		}
		slices.Sort(names)
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Fatalf("round %d: %d names, want %d", round, len(names), len(want))
		}
	}

	big := make([]byte, 5000)
	for i := range big {
		big[i] = byte('a' + i%26)
	}
	path := filepath.Join(dir, "big")
	if err := os.WriteFile(path, big, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{1, 511, 512, 513, 4999, 5000, 1 << 20} {
		got, err := readSmall(path, limit)
		if err != nil || string(got) != string(big[:min(limit, len(big))]) {
			t.Errorf("readSmall(limit %d): %d bytes, %v; want %d", limit, len(got), err, min(limit, len(big)))
		}
	}
	if _, err := readSmall(filepath.Join(dir, "missing"), 10); !os.IsNotExist(err) {
		t.Errorf("a missing file: %v, want not-exist", err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if _, err := readSmallAt(fd, "link", 10); err == nil {
		t.Error("readSmallAt followed a link")
	}
}
