package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"
)

// loadedConfig is the outcome of loading: the settings, the file read (if
// any) and where each key's value came from, for the debug log.
type loadedConfig struct {
	settings settings
	file     string
	sources  map[string]string
}

// loadConfig resolves every key: flag > MALARUN_* env > config file >
// default. viper reads the file; the precedence is resolved here so that
// every error, and the debug log, can name the source of each value (viper
// gives the winning value, not where it came from), and every value is
// parsed with error checks instead of viper's silent casts. An empty env
// value counts as unset.
func loadConfig(keys []keySpec, flags *pflag.FlagSet, getenv func(string) string) (loadedConfig, error) {
	lc := loadedConfig{settings: defaultSettings(), sources: map[string]string{}}
	path, err := findConfigFile(flags, getenv)
	if err != nil {
		return lc, err
	}
	lc.file = path
	fileVals := map[string]any{}
	var errs []error
	if path != "" {
		fileVals, errs = readConfigFile(path, keys)
		if fileVals == nil {
			return lc, usage(errors.Join(errs...))
		}
	}
	for _, k := range keys {
		var raw, source string
		if f := flags.Lookup(k.flagName()); f != nil && f.Changed {
			raw, source = f.Value.String(), "flag --"+k.flagName()
		} else if v := getenv(k.envName()); v != "" {
			raw, source = v, "env "+k.envName()
		} else if v, ok := fileVals[k.name]; ok {
			source = "file " + path
			raw, err = fileValue(v, k)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s (%s): %w", k.name, source, err))
				continue
			}
		} else {
			lc.sources[k.name] = "default"
			continue
		}
		lc.sources[k.name] = source
		if err := k.parse(&lc.settings, raw); err != nil {
			errs = append(errs, fmt.Errorf("%s %q (%s): %w", k.name, raw, source, err))
		}
	}
	if len(errs) > 0 {
		return lc, usage(errors.Join(errs...))
	}
	if err := resolvePaths(&lc, getenv); err != nil {
		return lc, usage(err)
	}
	return lc, nil
}

// resolvePaths fills the computed default of state_dir and makes paths
// absolute, so the logs and the run's records say exactly where things are.
func resolvePaths(lc *loadedConfig, getenv func(string) string) error {
	cfg := &lc.settings.cfg
	if cfg.StateDir == "" {
		dir := xdgDir(getenv, "XDG_STATE_HOME", filepath.Join(".local", "state"))
		if dir == "" {
			return errors.New("state_dir is not set and neither XDG_STATE_HOME nor HOME is: set state_dir")
		}
		cfg.StateDir = filepath.Join(dir, "malarun")
		lc.sources["state_dir"] = "default"
	}
	abs, err := filepath.Abs(cfg.StateDir)
	if err != nil {
		return fmt.Errorf("state_dir %q (%s): %w", cfg.StateDir, lc.sources["state_dir"], err)
	}
	cfg.StateDir = abs
	if cfg.Cwd != "" {
		abs, err := filepath.Abs(cfg.Cwd)
		if err != nil {
			return fmt.Errorf("cwd %q (%s): %w", cfg.Cwd, lc.sources["cwd"], err)
		}
		fi, err := os.Stat(abs)
		if err != nil {
			return fmt.Errorf("cwd %q (%s): %w", cfg.Cwd, lc.sources["cwd"], err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("cwd %q (%s): not a directory", cfg.Cwd, lc.sources["cwd"])
		}
		cfg.Cwd = abs
	}
	return nil
}
