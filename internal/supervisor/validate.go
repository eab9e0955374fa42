package supervisor

import (
	"fmt"
	"strings"

	"github.com/malarun/malarun/internal/limitstore"
	"github.com/malarun/malarun/internal/notrun"
	"github.com/malarun/malarun/internal/record"
)

// ValidateIssueID accepts letters, digits, '.', '_' and '-', at most
// record.maxIssueIDLen long, and not "." or "..": the id becomes a path component,
// so anything else could escape the state directory (record.CheckIssueName,
// which a record's issue is held to too). It must not start with
// '-' (a command line reads it as a flag, so the issue could be run only by
// a program, never typed) nor name a folder malarun keeps under state_dir
// for itself (docs/design.md §D19).
func ValidateIssueID(id string) error {
	if err := record.CheckIssueName(id); err != nil {
		return err
	}
	if strings.HasPrefix(id, "-") {
		return fmt.Errorf("issue id %q starts with '-': a command line reads it as a flag, so it could never be typed; start it with a letter or digit", id)
	}
	if strings.EqualFold(id, limitstore.DirName) {
		// Folded: on a case-insensitive file system the two are one folder.
		return fmt.Errorf("issue id %q is not allowed: state_dir/%s holds the usage limits malarun shares between runs", id, limitstore.DirName)
	}
	if strings.EqualFold(id, notrun.DirName) {
		return fmt.Errorf("issue id %q is not allowed: state_dir/%s holds the prompt files a fleet could not run", id, notrun.DirName)
	}
	return nil
}

// ownedFlags define the protocol between malarun and the CLI; a user who sets
// one would break the stream malarun reads or the session it resumes.
// A function, not a package variable: no mutable package state.
func ownedFlags() []string {
	return []string{
		"-p", "--print", "--output-format", "--input-format", "--verbose",
		"--resume", "-r", "--continue", "-c", "--session-id", "--fork-session",
		"--include-partial-messages",
	}
}

// CheckExtraArgs refuses extra CLI arguments that set a flag malarun owns,
// in any of its spellings (--flag, --flag=value).
func CheckExtraArgs(args []string) error {
	for _, a := range args {
		if a == "--" {
			// Everything after is positional for the CLI (a prompt): malarun
			// sends the prompt on stdin, so refuse that too.
			return fmt.Errorf("extra claude argument %q: malarun sends the prompt on stdin; do not pass positional prompt text", a)
		}
		name, _, _ := strings.Cut(a, "=")
		for _, f := range ownedFlags() {
			if name == f {
				return fmt.Errorf("extra claude argument %q sets %s, which malarun owns (it defines the stream and the session malarun supervises)", a, f)
			}
		}
	}
	return nil
}
