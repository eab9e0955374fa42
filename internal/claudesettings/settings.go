// Package claudesettings reads claude's own settings files for one fact:
// which of them sets a variable in its "env" object. The CLI copies that
// env into its process environment over the one it was started with, so a
// variable malarun sets for the CLI (or reads from its environment) may not
// be what the CLI uses. It reads files, so it is its own package: endpoint
// and attempt, which judge what the environment says, stay pure.
package claudesettings

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"

	"github.com/malarun/malarun/internal/environ"
	"github.com/malarun/malarun/internal/statefile"
)

// The CLI also takes its environment from the "env" object of its settings
// files, and a base URL set there is the one it connects to: malarun, which
// saw only its own environment, once looked at https://api.anthropic.com and
// ended a working run (issue 31). Which layer wins is the CLI's business
// and changes between versions, so malarun does not guess: when a settings
// file sets a variable that bears on the address (endpoint.AddressVars), it
// makes no look at all (the CLI's own retries, and malarun's, decide).

// maxSettingsBytes bounds what is read of one settings file.
const maxSettingsBytes = 1 << 20

// settingsFiles are the CLI's settings files for a CLI run in cwd with
// home and configDir (CLAUDE_CONFIG_DIR): managed, user, and the project's
// in cwd and each folder above it.
func settingsFiles(home, configDir, cwd string) []string {
	var files []string
	if runtime.GOOS == "darwin" {
		files = append(files, "/Library/Application Support/ClaudeCode/managed-settings.json")
	} else {
		files = append(files, "/etc/claude-code/managed-settings.json")
	}
	switch {
	case configDir != "":
		files = append(files, filepath.Join(configDir, "settings.json"))
	case home != "":
		files = append(files, filepath.Join(home, ".claude", "settings.json"))
	}
	if cwd == "" || !filepath.IsAbs(cwd) {
		return files
	}
	for dir, n := filepath.Clean(cwd), 0; n < 64; n++ {
		files = append(files, filepath.Join(dir, ".claude", "settings.json"), filepath.Join(dir, ".claude", "settings.local.json"))
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return files
}

// Find names the first of the CLI's settings files (for a CLI run in cwd
// with env) whose "env" sets one of vars, and which one ("" when none
// does), or a file that exists and cannot be read as JSON (then what it
// sets is unknown: name is ""). A settings file's env overrides the
// environment the CLI is started with (both pinned CLIs copy it into their
// process environment), so a variable malarun sets for the CLI may not be
// what the CLI uses.
func Find(env []string, cwd string, vars []string) (file, name string) {
	get := func(k string) string { return environ.Get(env, k) }
	return settingIn(settingsFiles(get("HOME"), get("CLAUDE_CONFIG_DIR"), cwd), vars)
}

// settingIn is Find in files, in order.
func settingIn(files, vars []string) (file, name string) {
	for _, f := range files {
		data, err := statefile.ReadFollowing(f, maxSettingsBytes) // a settings file may be a link (dotfiles)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return f + " (unreadable: " + err.Error() + ")", ""
		}
		var s struct {
			Env map[string]any `json:"env"`
		}
		if err := json.Unmarshal(data, &s); err != nil {
			return f + " (not JSON)", ""
		}
		for _, v := range vars {
			if _, ok := s.Env[v]; ok {
				return f, v
			}
		}
	}
	return "", ""
}
