package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/malarun/malarun/internal/configkey"
	"github.com/malarun/malarun/internal/supervisor"
)

// settings is what the configuration layers produce: the supervisor's Config
// plus the keys only the command line uses (logging).
type settings struct {
	cfg       supervisor.Config
	logFormat string
	logLevel  string
}

func defaultSettings() settings {
	return settings{cfg: supervisor.DefaultConfig(), logFormat: "auto", logLevel: "info"}
}

// keySpec is one configuration key as the command line reads it. The flag,
// the environment variable, the config file entry, the help text and the
// example file check are all derived from it; a run's key is one entry in
// supervisor.Keys (runKey makes its keySpec).
type keySpec struct {
	name string
	// kind is shown in the help: duration, bool, string, or the allowed values.
	kind string
	help string
	// defDoc documents the default when the stored zero value stands for a
	// computed one (state_dir "" = $XDG_STATE_HOME/malarun).
	defDoc string
	// stringOnly: in a config file only a YAML string is accepted (a path
	// written as a number is more likely a mistake than a name).
	stringOnly bool
	// list: a YAML list in a file, comma-separated in a flag or env var.
	list bool
	// parse checks raw and stores it; its error says what is allowed but not
	// which key or source: the loader adds those.
	parse func(s *settings, raw string) error
	// format renders the current value as it is written in a config file.
	format func(s *settings) string
}

// configKeys is every key: the run's (supervisor.Keys, where each key's
// name, help, default and check live) and the two of logging, which only
// the command line uses. A function rather than a package variable: the
// package keeps no global state (version aside).
func configKeys() []keySpec {
	var keys []keySpec
	for _, k := range supervisor.Keys() {
		keys = append(keys, runKey(k))
	}
	return append(keys,
		enumKey(configkey.LogFormat, []string{"auto", "console", "json"}, "log format on stderr; auto: console on a terminal, JSON otherwise",
			func(s *settings) string { return s.logFormat }, func(s *settings, v string) { s.logFormat = v }),
		enumKey(configkey.LogLevel, []string{"debug", "info", "warn", "error"}, "least severe log level written to stderr",
			func(s *settings) string { return s.logLevel }, func(s *settings, v string) { s.logLevel = v }))
}

// stateDirKey is shared by the run and `malarun status`, `show`, `summary`.
func stateDirKey() keySpec { return runKey(supervisor.StateDirKey()) }

// runKey is a run's key as the command line reads it: its value parsed
// from text by its kind, into the field the key table names, with the
// bounds the table gives (which Validate checks again on the whole
// Config, in its own words).
func runKey(k supervisor.Key) keySpec {
	var spec keySpec
	switch v := k.Value.(type) {
	case supervisor.TextValue:
		spec = stringKey(k.Name, k.Help, func(s *settings) *string { return v.Field(&s.cfg) })
	case supervisor.ChoiceValue:
		spec = enumKey(k.Name, v.Allowed, k.Help,
			func(s *settings) string { return v.Get(&s.cfg) }, func(s *settings, x string) { v.Set(&s.cfg, x) })
	case supervisor.BoolValue:
		spec = boolKey(k.Name, k.Help, func(s *settings) *bool { return v.Field(&s.cfg) })
	case supervisor.DurationValue:
		spec = durationKey(k.Name, v.ZeroTurnsOff(), k.Help, func(s *settings) *time.Duration { return v.Field(&s.cfg) })
	case supervisor.DurationsValue:
		spec = durationListKey(k.Name, k.Help, func(s *settings) *[]time.Duration { return v.Field(&s.cfg) })
	case supervisor.IntValue:
		spec = intKey(k.Name, v.Min, k.Help, func(s *settings) *int { return v.Field(&s.cfg) })
	case supervisor.NumberValue:
		spec = floatKey(k.Name, k.Help, func(s *settings) *float64 { return v.Field(&s.cfg) })
	case supervisor.FractionValue:
		spec = fractionKey(k.Name, k.Help, func(s *settings) *float64 { return v.Field(&s.cfg) })
	case supervisor.NamesValue:
		spec = stringListKey(k.Name, k.Help, func(s *settings) *[]string { return v.Field(&s.cfg) })
	default:
		panic(fmt.Sprintf("key %s: a value of type %T has no parser", k.Name, k.Value))
	}
	spec.defDoc = k.DefDoc
	return spec
}

func (k keySpec) flagName() string { return strings.ReplaceAll(k.name, "_", "-") }
func (k keySpec) envName() string  { return "MALARUN_" + strings.ToUpper(k.name) }

// yamlDefault is the default as written in a config file.
func (k keySpec) yamlDefault() string {
	d := defaultSettings()
	return k.format(&d)
}

// defaultDoc is the default as shown to a reader.
func (k keySpec) defaultDoc() string {
	if k.defDoc != "" {
		return k.defDoc
	}
	return k.yamlDefault()
}
