package e2e_test

import (
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/journal"
	"github.com/malarun/malarun/internal/testing/fakeapi"
)

// sharedLimit is one account for several issues of the soak: one fake API
// and one subscription token, whose usage limit stops them all until it
// resets (issue 40). The first malarun that meets it writes the machine's
// note; others on the account stop before they call the API (§D10). The
// account is limited for the first limitFor of every limitEvery of the
// soak, so a long soak meets the limit again and again, and an issue may
// start in a window or between two.
type sharedLimit struct {
	api   *fakeapi.Server
	start time.Time
}

const (
	limitEvery = 90 * time.Second
	limitFor   = 25 * time.Second
)

// limitedUntil is when the account's limit resets, if it is limited at now.
func (l *sharedLimit) limitedUntil(now time.Time) (time.Time, bool) {
	into := now.Sub(l.start) % limitEvery
	return now.Add(limitFor - into), into < limitFor
}

func newSharedLimit(t *testing.T) *sharedLimit {
	l := &sharedLimit{start: time.Now()}
	// The issue's prompt names it and its side-effect file, for the
	// shared API to tell the issues apart.
	task := regexp.MustCompile(`soak issue (\d+): append to (/\S+/side-effect)`)
	l.api = fakeapi.Start(t, fakeapi.WithResponder(func(r *fakeapi.Request) (fakeapi.Step, bool) {
		m := task.FindStringSubmatch(r.AllText())
		if m == nil {
			return fakeapi.Step{}, false
		}
		if resetAt, limited := l.limitedUntil(time.Now()); limited {
			return fakeapi.UsageLimited("five_hour", resetAt), true
		}
		n, _ := strconv.Atoi(m[1])
		id := "toolu_shared" + m[1]
		if r.HasToolResult(id) {
			return fakeapi.Text(fmt.Sprintf("Issue %d done.", n)), true
		}
		return fakeapi.Bash("echo ran >> " + m[2]).WithToolUseID(id), true
	}))
	return l
}

// ownLimit is the usage-limit fault of one issue: the request after its
// Bash call is refused by a limit that resets 20 s after that request,
// however late in a long soak the issue starts; then the script answers.
func ownLimit(id string) fakeapi.Option {
	var mu sync.Mutex
	var resetAt time.Time
	return fakeapi.WithResponder(func(r *fakeapi.Request) (fakeapi.Step, bool) {
		if !r.HasToolResult(id) {
			return fakeapi.Step{}, false
		}
		mu.Lock()
		defer mu.Unlock()
		if resetAt.IsZero() {
			resetAt = time.Now().Add(20 * time.Second)
		}
		if time.Now().Before(resetAt) {
			return fakeapi.UsageLimited("five_hour", resetAt), true
		}
		return fakeapi.Step{}, false
	})
}

// issue is a soak issue on the shared account.
func (l *sharedLimit) issue(t *testing.T, n int, side string) *soakIssue {
	e := newEnvWith(t)
	e.api = l.api
	e.task = fmt.Sprintf("Fix soak issue %d: append to %s.", n, side)
	oauthEnv(e)
	return &soakIssue{n: n, fault: "shared-limit", e: e, side: side}
}

// claudePid is the pid of the claude an issue's malarun runs now (0: none
// recorded yet).
func claudePid(stateDir, issue string) int {
	e, ok := journal.Read(stateDir, issue)
	if !ok || e.Err != nil || len(e.Record.Tree) == 0 {
		return 0
	}
	return e.Record.Tree[0].Pid
}
