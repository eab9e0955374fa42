package supervisor_test

import (
	"strings"
	"testing"
	"testing/synctest"

	"github.com/malarun/malarun/internal/supervisor"
)

// Ids a program could pass to Run but no one could type, or that would
// share a folder with malarun's own, are refused with the reason.
func TestIssueIDsMalarunCannotUse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for id, want := range map[string]string{
			"-x":           "starts with '-'",
			"--reset":      "starts with '-'",
			"-":            "starts with '-'",
			"usage-limits": "holds the usage limits",
			"USAGE-LIMITS": "holds the usage limits",
			"not-run":      "holds the prompt files a fleet could not run",
			"Not-Run":      "holds the prompt files a fleet could not run",
		} {
			err := supervisor.ValidateIssueID(id)
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `"`+id+`"`) {
				t.Errorf("ValidateIssueID(%q) = %v, want an error naming it and saying %q", id, err, want)
			}
		}
		for _, id := range []string{"a-", "x-usage-limits", "usage-limits-1", "0-day", "not-run-1"} {
			if err := supervisor.ValidateIssueID(id); err != nil {
				t.Errorf("ValidateIssueID(%q) = %v, want nil", id, err)
			}
		}
	})
}
