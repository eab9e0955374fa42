package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// TestNumberAndListKeys runs the retry policy keys (integers, a number,
// lists) through the real loader.
func TestNumberAndListKeys(t *testing.T) {
	tests := []struct {
		name  string
		file  string
		env   map[string]string
		flags []string
		check func(t *testing.T, s settings)
		err   []string
	}{
		{name: "defaults round-trip", check: func(t *testing.T, s settings) {
			if d := defaultSettings(); s.cfg.MaxAttempts != d.cfg.MaxAttempts || !slices.Equal(s.cfg.Backoff, d.cfg.Backoff) {
				t.Errorf("got %+v", s.cfg)
			}
		}},
		{name: "file", file: "max_attempts: 4\nmax_cost_usd: 2.5\nbackoff: [0, 1m, 90s]\nside_effect_free_tools: [Read, Grep]\n",
			check: func(t *testing.T, s settings) {
				c := s.cfg
				if c.MaxAttempts != 4 || c.MaxCostUSD != 2.5 || !slices.Equal(c.Backoff, []time.Duration{0, time.Minute, 90 * time.Second}) ||
					!slices.Equal(c.SideEffectFreeTools, []string{"Read", "Grep"}) {
					t.Errorf("got %+v", c)
				}
			}},
		{name: "file, empty list", file: "side_effect_free_tools: []\n", check: func(t *testing.T, s settings) {
			if s.cfg.SideEffectFreeTools == nil || len(s.cfg.SideEffectFreeTools) != 0 {
				t.Errorf("got %#v, want an empty list", s.cfg.SideEffectFreeTools)
			}
		}},
		{name: "env", env: map[string]string{"MALARUN_BACKOFF": "1s, 2s", "MALARUN_SIDE_EFFECT_FREE_TOOLS": "Read,LS", "MALARUN_MAX_COST_USD": "0"},
			check: func(t *testing.T, s settings) {
				if !slices.Equal(s.cfg.Backoff, []time.Duration{time.Second, 2 * time.Second}) ||
					!slices.Equal(s.cfg.SideEffectFreeTools, []string{"Read", "LS"}) || s.cfg.MaxCostUSD != 0 {
					t.Errorf("got %+v", s.cfg)
				}
			}},
		{name: "flag", flags: []string{"--max-attempts", "1", "--backoff", "[5s]"}, check: func(t *testing.T, s settings) {
			if s.cfg.MaxAttempts != 1 || !slices.Equal(s.cfg.Backoff, []time.Duration{5 * time.Second}) {
				t.Errorf("got %+v", s.cfg)
			}
		}},
		{name: "bad int", env: map[string]string{"MALARUN_MAX_ATTEMPTS": "0"}, err: []string{`max_attempts "0" (env MALARUN_MAX_ATTEMPTS): must be at least 1`}},
		{name: "not an int", file: "max_attempts: 2.5\n", err: []string{"max_attempts", "not a whole number"}},
		{name: "bad float", flags: []string{"--max-cost-usd", "-1"}, err: []string{"max_cost_usd", "must not be negative"}},
		{name: "nan", env: map[string]string{"MALARUN_MAX_COST_USD": "NaN"}, err: []string{"max_cost_usd", "not a number"}},
		{name: "bare number in a list", file: "backoff: [5s, 30]\n", err: []string{"backoff", "entry 2: 30 needs a unit"}},
		{name: "comma in a list entry", file: "side_effect_free_tools: [\"a,b\"]\n", err: []string{"side_effect_free_tools", "cannot contain a comma"}},
		{name: "entry without a value", file: "backoff: [5s, ~]\n", err: []string{"backoff", "entry 2: has no value"}},
		{name: "nested list", file: "side_effect_free_tools: [[a]]\n", err: []string{"side_effect_free_tools", "entry 1", "single value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCLI(t)
			keys := configKeys()
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			addConfigFlag(fs, "")
			addKeyFlags(fs, keys)
			args := tt.flags
			if tt.file != "" {
				args = append(args, "--config", c.file("c.yaml", tt.file))
			}
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			lc, err := loadConfig(keys, fs, func(k string) string { return tt.env[k] + c.env[k] })
			if tt.err == nil {
				if err != nil {
					t.Fatal(err)
				}
				tt.check(t, lc.settings)
				return
			}
			if err == nil {
				t.Fatalf("no error, want one containing %q", tt.err)
			}
			for _, w := range tt.err {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	for _, k := range configKeys() {
		s := defaultSettings()
		raw := strings.Trim(k.yamlDefault(), `"`)
		if err := k.parse(&s, raw); err != nil || k.format(&s) != k.yamlDefault() {
			t.Errorf("key %s: default %q does not round-trip: %v, %q", k.name, k.yamlDefault(), err, k.format(&s))
		}
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in           string
		zeroDisables bool
		want         time.Duration
		err          string
	}{
		{"5m", false, 5 * time.Minute, ""},
		{" 90s ", false, 90 * time.Second, ""},
		{"1h30m", false, 90 * time.Minute, ""},
		{"300", false, 0, "300 needs a unit, e.g. 300s or 5m"},
		{"1.5", false, 0, "1.5 needs a unit"},
		{"-5", false, 0, "needs a unit"},
		{"0", false, 0, "0 needs a unit"},
		{"0", true, 0, ""},
		{"0.0", true, 0, ""},
		{"0s", true, 0, ""},
		{"0s", false, 0, "must be positive"},
		{"-1s", true, 0, "must not be negative"},
		{"5 m", false, 0, "not a duration"},
		{"", false, 0, "not a duration"},
		{"NaN", false, 0, "not a duration"},
	}
	for _, tt := range tests {
		got, err := parseDuration(tt.in, tt.zeroDisables)
		if tt.err == "" {
			if err != nil || got != tt.want {
				t.Errorf("parseDuration(%q, %v) = %v, %v; want %v", tt.in, tt.zeroDisables, got, err, tt.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("parseDuration(%q, %v) error = %v, want one containing %q", tt.in, tt.zeroDisables, err, tt.err)
		}
	}
}
