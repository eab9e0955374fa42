package limitstore

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/usagelimit"
)

func TestKey(t *testing.T) {
	secret := "sk-ant-oat01-very-secret-token"
	k := Key(secret)
	if len(k) != 16 || checkKey(k) != nil {
		t.Errorf("key %q is not 16 hex digits", k)
	}
	if strings.Contains(secret, k) || strings.Contains(k, "secret") {
		t.Errorf("key %q shows the secret", k)
	}
	if Key(secret) != k {
		t.Errorf("key is not stable")
	}
	if Key("sk-ant-other") == k {
		t.Errorf("two accounts share a key")
	}
	if Key("") != Key("default") {
		t.Errorf("no credential should be the default account")
	}
}

func TestStoreRoundTrip(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	now := time.Date(2026, 11, 22, 15, 5, 11, 0, time.UTC)
	paris, err := time.LoadLocation("Europe/Paris") // embedded: usagelimit imports time/tzdata
	if err != nil {
		t.Fatal(err)
	}
	want := usagelimit.Limit{RetryAt: time.Date(2026, 11, 22, 17, 5, 11, 0, paris), Type: "five_hour", Waitable: true}
	key := Key("token-a")
	if _, ok := s.Read(key, now); ok {
		t.Fatalf("empty store has a limit")
	}
	if err := s.Write(key, want); err != nil {
		t.Fatal(err)
	}
	got, ok := s.Read(key, now)
	if !ok {
		t.Fatalf("limit not read back")
	}
	sameLimit(t, got, want)
	if _, ok := s.Read(Key("token-b"), now); ok {
		t.Errorf("another account is blocked by token-a's limit")
	}
	dir := filepath.Join(s.Dir, DirName)
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != key+".json" {
		t.Errorf("files: %v", entries)
	}
	st, _ := os.Stat(filepath.Join(dir, key+".json"))
	d, _ := os.Stat(dir)
	if st.Mode().Perm() != 0o600 || d.Mode().Perm() != 0o700 {
		t.Errorf("modes: file %v, folder %v", st.Mode().Perm(), d.Mode().Perm())
	}
	data, _ := os.ReadFile(filepath.Join(dir, key+".json"))
	if strings.Contains(string(data), "token-a") {
		t.Errorf("the credential is on disk: %s", data)
	}

	// A newer limit replaces the old one.
	later := usagelimit.Limit{RetryAt: want.RetryAt.Add(24 * time.Hour), Type: "seven_day", Waitable: true}
	if err := s.Write(key, later); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Read(key, now)
	sameLimit(t, got, later)
}

func TestStoreForgetsWhatNoLongerHolds(t *testing.T) {
	now := time.Date(2026, 11, 22, 15, 5, 11, 0, time.UTC)
	cases := []struct {
		name  string
		write string // file content; "" = write a limit resetting at reset
		reset time.Time
	}{
		{"reset passed", "", now.Add(-time.Second)},
		{"reset is now", "", now},
		{"reset implausibly far", "", now.Add(usagelimit.MaxAhead + time.Second)},
		{"damaged", "{\"version\":1,\"retry_at\":", time.Time{}},
		{"unknown field", `{"version":1,"retry_at":"2026-11-22T17:00:00Z","secret":"x"}`, time.Time{}},
		{"other version", `{"version":2,"retry_at":"2026-11-22T17:00:00Z"}`, time.Time{}},
		{"no reset", `{"version":1,"type":"five_hour"}`, time.Time{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := Store{Dir: t.TempDir()}
			key := Key("t")
			path := filepath.Join(s.Dir, DirName, key+".json")
			if c.write == "" {
				if err := s.Write(key, usagelimit.Limit{RetryAt: c.reset, Waitable: true}); err != nil {
					t.Fatal(err)
				}
			} else {
				os.MkdirAll(filepath.Dir(path), 0o700)
				if err := os.WriteFile(path, []byte(c.write), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if l, ok := s.Read(key, now); ok {
				t.Errorf("read %+v, want nothing", l)
			}
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Errorf("file left behind: %v", err)
			}
		})
	}
}

func TestStoreRefuses(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	if err := s.Write(Key("t"), usagelimit.Limit{Waitable: true}); err == nil {
		t.Errorf("a limit with no reset was stored: it would never expire")
	}
	if err := s.Write(Key("t"), usagelimit.Limit{RetryAt: time.Now().Add(time.Hour), Reason: "credits"}); err == nil {
		t.Errorf("a limit waiting cannot fix was stored")
	}
	for _, bad := range []string{"", "../record", "ABC", "a/b", strings.Repeat("a", 65)} {
		if err := s.Write(bad, usagelimit.Limit{RetryAt: time.Now().Add(time.Hour), Waitable: true}); err == nil {
			t.Errorf("key %q accepted", bad)
		}
		if _, ok := s.Read(bad, time.Now()); ok {
			t.Errorf("key %q read", bad)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(s.Dir, DirName)); len(entries) != 0 {
		t.Errorf("files written: %v", entries)
	}
	// A state directory that cannot hold the folder is an error, not a panic.
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	if err := (Store{Dir: file}).Write(Key("t"), usagelimit.Limit{RetryAt: time.Now().Add(time.Hour), Waitable: true}); err == nil {
		t.Errorf("write under a file succeeded")
	}
}

func TestStoreLeavesNoTemporaryFiles(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	at := time.Date(2026, 11, 22, 16, 0, 0, 0, time.UTC)
	for i := range 5 {
		if err := s.Write(Key("t"), usagelimit.Limit{RetryAt: at.Add(time.Duration(i) * time.Minute), Waitable: true}); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(s.Dir, DirName))
	if len(entries) != 1 {
		t.Errorf("files: %v", entries)
	}
	got, ok := s.Read(Key("t"), at)
	if !ok || !got.RetryAt.Equal(at.Add(4*time.Minute)) {
		t.Errorf("last write lost: %+v %v", got, ok)
	}
}

// A FIFO, a link or a huge sparse file planted as an account's note is
// refused at once (no blocking open, no read of gigabytes), removed, and
// reported.
func TestPlantedNotesAreRemoved(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	var refused []string
	s.Refused = func(err error) { refused = append(refused, err.Error()) }
	key := Key("t")
	path := s.path(key)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	plant := []func() error{
		func() error { return syscall.Mkfifo(path, 0o600) },
		func() error { return os.Symlink("/etc/passwd", path) },
		func() error {
			f, err := os.Create(path)
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(2 << 30)
		},
	}
	for i, p := range plant {
		if err := p(); err != nil {
			t.Fatal(err)
		}
		if _, ok := s.Read(key, time.Now()); ok {
			t.Errorf("plant %d: read as a limit", i)
		}
		if _, err := os.Lstat(path); !os.IsNotExist(err) {
			t.Errorf("plant %d: not removed (%v)", i, err)
		}
	}
	if len(refused) != 3 {
		t.Errorf("refusals reported: %q", refused)
	}
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Errorf("the link's target went too: %v", err)
	}
}

// sameLimit: a note gives back the reset and the kind it was written with,
// waitable, and no reason.
func sameLimit(t *testing.T, got, want usagelimit.Limit) {
	t.Helper()
	if !got.RetryAt.Equal(want.RetryAt) || got.Type != want.Type || got.Waitable != want.Waitable || got.Reason != "" {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
