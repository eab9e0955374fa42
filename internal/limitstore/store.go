// Package limitstore shares known usage-limit resets between the malaruns
// of one machine and one account (docs/design.md §D10): a note per account
// under <state_dir>/usage-limits/, keyed by a hash of the credential, never
// the credential. It is the only file I/O of the usage limits: reading a
// limit, and deciding what to do about it, is internal/usagelimit's pure
// work.
package limitstore

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/malarun/malarun/internal/statefile"
	"github.com/malarun/malarun/internal/usagelimit"
)

// DirName is the folder of the state directory that holds the shared
// resets, one file per account.
const DirName = "usage-limits"

// Store shares known resets between the malaruns of one machine: a run
// that learns its account is limited until 16:06 writes it down, and the
// next run on the same account reads it instead of spending an attempt
// (and a CLI start) to be told again.
type Store struct {
	Dir string // the state directory; files go in <Dir>/usage-limits/<key>.json
	// Refused is told of a file that is no note of malarun's (a FIFO, a
	// link, a device, a file over MaxStoreBytes): it is removed and
	// ignored (nil: silently).
	Refused func(error)
}

// MaxStoreBytes bounds what is read of one file: malarun writes about a
// hundred bytes.
const MaxStoreBytes = 64 << 10

// Key names an account without putting its secret on disk: a prefix of
// the SHA-256 of the credential (API key or OAuth token), "default" when
// the CLI uses its own stored login. Different accounts get different
// files, so one account's limit never holds another's runs back. The
// domain prefix keeps the hash from matching any other use of the token.
func Key(credential string) string {
	if credential == "" {
		credential = "default"
	}
	sum := sha256.Sum256([]byte("malarun usage-limit key\x00" + credential))
	return hex.EncodeToString(sum[:8])
}

// storedLimit is the file's format.
type storedLimit struct {
	Version int       `json:"version"`
	RetryAt time.Time `json:"retry_at"`
	Type    string    `json:"type,omitempty"`
}

const storeVersion = 1

// Write records l for the account key, atomically (a temporary file
// renamed over the old one), so a reader sees the old limit or the new
// one. No fsync: the file is a hint, and losing it in a machine crash
// costs one attempt. Only a waitable limit with a known reset is shared:
// one with no reset could never expire, and one that waiting cannot fix
// (credits, a spend cap) a person can fix at any moment, so the next run
// should try rather than trust an old refusal.
func (s Store) Write(key string, l usagelimit.Limit) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if !l.Known() {
		return errors.New("a limit with an unknown reset cannot be shared: it would never expire")
	}
	if !l.Waitable {
		return errors.New("a limit that waiting cannot fix is not shared: a person may fix it before its reset")
	}
	dir := filepath.Join(s.Dir, DirName)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("save the usage limit: %w", err)
	}
	data, err := json.Marshal(storedLimit{Version: storeVersion, RetryAt: l.RetryAt.UTC(), Type: l.Type})
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+key+".tmp-*")
	if err != nil {
		return fmt.Errorf("save the usage limit: %w", err)
	}
	_, werr := tmp.Write(append(data, '\n'))
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("save the usage limit: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.path(key)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("save the usage limit: %w", err)
	}
	return nil
}

// Read returns the limit recorded for key, if it still holds at now. A
// limit whose reset has passed is removed (best effort: another malarun
// may have removed it or written a new one); so is a damaged file, or one
// whose reset is implausibly far (over usagelimit.MaxAhead), so that no file can
// block an account for good.
func (s Store) Read(key string, now time.Time) (usagelimit.Limit, bool) {
	if checkKey(key) != nil {
		return usagelimit.Limit{}, false
	}
	path := s.path(key)
	data, err := statefile.Read(path, MaxStoreBytes)
	var notRegular *statefile.NotRegularError
	var tooLarge *statefile.TooLargeError
	if errors.As(err, &notRegular) || errors.As(err, &tooLarge) {
		os.Remove(path) // the planted thing itself, never what a link points to
		if s.Refused != nil {
			s.Refused(err)
		}
		return usagelimit.Limit{}, false
	}
	if err != nil {
		return usagelimit.Limit{}, false
	}
	var st storedLimit
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if dec.Decode(&st) != nil || st.Version != storeVersion || st.RetryAt.IsZero() ||
		!st.RetryAt.After(now) || st.RetryAt.After(now.Add(usagelimit.MaxAhead)) {
		removeIfUnchanged(path, data)
		return usagelimit.Limit{}, false
	}
	return usagelimit.Limit{RetryAt: st.RetryAt, Type: st.Type, Waitable: true}, true
}

// removeIfUnchanged removes path unless another malarun has just written
// a new limit there. The check and the removal are not one step; losing
// that race loses a shared hint, never a run.
func removeIfUnchanged(path string, was []byte) {
	if now, err := statefile.Read(path, MaxStoreBytes); err == nil && bytes.Equal(now, was) {
		os.Remove(path)
	}
}

func (s Store) path(key string) string { return filepath.Join(s.Dir, DirName, key+".json") }

// checkKey keeps a key to what Key makes (lower-case hex), so it cannot
// name a path outside the folder.
func checkKey(key string) error {
	if key == "" || len(key) > 64 {
		return fmt.Errorf("usage-limit key %q is not a key made by Key", key)
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return fmt.Errorf("usage-limit key %q is not a key made by Key", key)
		}
	}
	return nil
}
