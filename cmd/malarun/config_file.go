package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// addConfigFlag adds --config; findConfigFile reads it from the flag set.
func addConfigFlag(flags *pflag.FlagSet, help string) {
	flags.String("config", "", help)
}

// findConfigFile returns the first of: --config FILE (which must exist),
// ./malarun.yaml, $XDG_CONFIG_HOME/malarun/config.yaml; or "" for none.
func findConfigFile(flags *pflag.FlagSet, getenv func(string) string) (string, error) {
	if f := flags.Lookup("config"); f != nil && f.Changed {
		p := f.Value.String()
		if p == "" {
			return "", usagef("--config is empty: give the path of a YAML config file")
		}
		found, err := configFileAt(p, " (from --config)")
		switch {
		case err != nil:
			return "", err
		case !found:
			return "", usagef("config file %s (from --config) does not exist", p)
		}
		return p, nil
	}
	candidates := []string{"malarun.yaml"}
	if dir := xdgDir(getenv, "XDG_CONFIG_HOME", ".config"); dir != "" {
		candidates = append(candidates, filepath.Join(dir, "malarun", "config.yaml"))
	}
	for _, p := range candidates {
		found, err := configFileAt(p, "")
		if err != nil {
			return "", err
		}
		if found {
			return p, nil
		}
	}
	return "", nil
}

// configFileAt reports whether p is a file to read; anything else there
// (a directory, a path that cannot be checked) is an error, not a reason
// to look further. origin is appended to the path in messages.
func configFileAt(p, origin string) (bool, error) {
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, usagef("config file %s%s: %v", p, origin, err)
	case fi.IsDir():
		return false, usagef("config file %s%s is a directory", p, origin)
	}
	return true, nil
}

// xdgDir is $VAR, or $HOME/fallback when VAR is unset or relative (the XDG
// spec says to ignore relative values); "" when neither is known.
func xdgDir(getenv func(string) string, envVar, fallback string) string {
	if v := getenv(envVar); v != "" && filepath.IsAbs(v) {
		return v
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, fallback)
	}
	return ""
}

// readConfigFile returns the file's top-level keys and values. A nil map
// means the file could not be read at all; otherwise errs lists the unknown
// or malformed keys. viper only reads the YAML here (see loadConfig). It
// lists keys flattened, a nested mapping as "key.sub", and not at all when
// the mapping is empty: both are reported, as every key holds one value.
func readConfigFile(path string, keys []keySpec) (map[string]any, []error) {
	v := viper.New()
	v.SetConfigFile(path)
	v.SetConfigType("yaml")
	if err := v.ReadInConfig(); err != nil {
		return nil, []error{fmt.Errorf("config file %s: %w", path, err)}
	}
	known := map[string]bool{}
	var names []string
	for _, k := range keys {
		known[k.name] = true
		names = append(names, k.name)
	}
	vals := map[string]any{}
	reported := map[string]bool{}
	var errs []error
	inFile := v.AllKeys()
	sort.Strings(inFile)
	for _, key := range inFile {
		top, rest, nested := strings.Cut(key, ".")
		if reported[top] {
			continue
		}
		switch {
		case !known[top]:
			reported[top] = true
			msg := fmt.Sprintf("unknown key %q in config file %s", top, path)
			if s := closest(top, names); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			} else {
				msg += "; known keys: " + strings.Join(names, ", ")
			}
			errs = append(errs, errors.New(msg))
		case nested:
			reported[top] = true
			errs = append(errs, fmt.Errorf("%s (file %s): must be a single value, not a mapping (found %s.%s)", top, path, top, rest))
		default:
			vals[key] = v.Get(key)
		}
	}
	for _, name := range names {
		if _, listed := vals[name]; !listed && !reported[name] && v.InConfig(name) {
			errs = append(errs, fmt.Errorf("%s (file %s): must be a single value, not a mapping", name, path))
		}
	}
	return vals, errs
}

// fileValue turns a decoded YAML value into the text the key parsers take.
func fileValue(v any, k keySpec) (string, error) {
	if l, ok := v.([]any); ok && k.list {
		parts := make([]string, len(l))
		for i, e := range l {
			p, err := fileScalar(e, false)
			if err != nil {
				return "", fmt.Errorf("entry %d: %w", i+1, err)
			}
			if strings.Contains(p, ",") {
				return "", fmt.Errorf("entry %d %q: an entry cannot contain a comma", i+1, p)
			}
			parts[i] = p
		}
		return strings.Join(parts, ","), nil
	}
	return fileScalar(v, k.stringOnly)
}

func fileScalar(v any, stringOnly bool) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", errors.New("has no value: give one, or remove the key for its default")
	case string:
		return x, nil
	case []any:
		return "", errors.New("must be a single value, not a list")
	case map[string]any:
		return "", errors.New("must be a single value, not a mapping")
	}
	if stringOnly {
		return "", fmt.Errorf("%v must be a string; quote it", v)
	}
	switch v.(type) {
	case bool, int, int64, uint64, float64:
		return fmt.Sprint(v), nil
	}
	return "", fmt.Errorf("%v (%T) is not a value this key accepts", v, v)
}
