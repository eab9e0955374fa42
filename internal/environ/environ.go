// Package environ reads and edits a process environment given as a list
// of NAME=value entries (os.Environ's form, and exec.Cmd.Env's). A name set
// twice has the value of its last entry, as exec gives the child.
package environ

import (
	"slices"
	"strings"
)

// Lookup is name's value in env, and whether env sets it.
func Lookup(env []string, name string) (string, bool) {
	for _, kv := range slices.Backward(env) {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// Get is name's value in env ("" when unset).
func Get(env []string, name string) string {
	v, _ := Lookup(env, name)
	return v
}

// Without is env with every entry of name removed (a new list).
func Without(env []string, name string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// With is env with name set to value, replacing every earlier entry (a new
// list); an empty value leaves env as it is.
func With(env []string, name, value string) []string {
	if value == "" {
		return env
	}
	return append(Without(env, name), name+"="+value)
}
