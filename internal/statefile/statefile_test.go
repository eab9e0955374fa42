package statefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Every kind of thing planted at a state path is refused at once, without
// blocking; a regular file within the cap is read; a sparse file of 3 GiB
// is refused before a byte is read.
func TestPlantedFilesAreRefused(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "record.json")
	if err := os.WriteFile(regular, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(regular, link); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge")
	if f, err := os.Create(huge); err != nil {
		t.Fatal(err)
	} else {
		f.Truncate(3 << 30)
		f.Close()
	}
	cases := []struct {
		path string
		want string // "" = read
	}{
		{regular, ""},
		{fifo, "a FIFO, not a regular file"},
		{link, "a symbolic link"},
		{dir, "a directory"},
		{"/dev/null", "a device"},
		{huge, "is 3221225472 bytes, over the 1048576"},
	}
	for _, c := range cases {
		start := time.Now()
		b, err := Read(c.path, 1<<20)
		if took := time.Since(start); took > time.Second {
			t.Errorf("%s: took %v", c.path, took)
		}
		switch {
		case c.want == "" && (err != nil || string(b) != "{}"):
			t.Errorf("%s: %q, %v", c.path, b, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: err %v, want one saying %q", c.path, err, c.want)
		}
	}
	if _, err := Read(filepath.Join(dir, "missing"), 1); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want fs.ErrNotExist", err)
	}
	var nr *NotRegularError
	if _, err := Open(fifo); !errors.As(err, &nr) || nr.Mode&fs.ModeNamedPipe == 0 {
		t.Errorf("a FIFO's error: %v", err)
	}
}

// ReadFollowing, for the files the user names, follows a link and still
// refuses a FIFO without blocking.
func TestReadFollowing(t *testing.T) {
	dir := t.TempDir()
	file, link, fifo := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "link"), filepath.Join(dir, "fifo")
	if err := os.WriteFile(file, []byte("pem"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFollowing(link, 10); err != nil || string(b) != "pem" {
		t.Errorf("a link: %q, %v", b, err)
	}
	var nr *NotRegularError
	if _, err := ReadFollowing(fifo, 10); !errors.As(err, &nr) {
		t.Errorf("a FIFO: %v", err)
	}
	var tl *TooLargeError
	if _, err := ReadFollowing(link, 2); !errors.As(err, &tl) {
		t.Errorf("over the cap: %v", err)
	}
}
