package supervisor

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Key is one configuration key of a run, described once (keys.go): its
// name, its help, what it holds, its default and the values it allows.
// DefaultConfig is built from the table and Validate checks a Config
// against it; cmd/malarun parses each source (flag, MALARUN_* variable,
// config file) into the same fields and derives --help, the man page and
// docs/configuration.md's table from it (docs/design.md §D8).
type Key struct {
	Name string
	Help string
	// DefDoc is the default as a reader is told it where the stored one
	// stands for one computed later (state_dir: $XDG_STATE_HOME/malarun);
	// "": the value's Default.
	DefDoc string
	// Value is where the key lives in a Config, its default and its check:
	// one of the *Value types below.
	Value Value
}

// Value is what a key holds: one of TextValue, ChoiceValue, BoolValue,
// DurationValue, DurationsValue, IntValue, NumberValue, FractionValue,
// NamesValue.
type Value interface {
	// setDefault stores the key's default in c.
	setDefault(c *Config)
	// check says what is wrong with the key's value in c, naming the key
	// (nil: nothing).
	check(name string, c *Config) error
}

// TextValue is a string. Required: an empty one is refused, its error
// followed by Hint when there is one.
type TextValue struct {
	Field    func(*Config) *string
	Default  string
	Required bool
	Hint     string
}

func (v TextValue) setDefault(c *Config) { *v.Field(c) = v.Default }

func (v TextValue) check(name string, c *Config) error {
	if !v.Required || *v.Field(c) != "" {
		return nil
	}
	if v.Hint == "" {
		return fmt.Errorf("%s is empty", name)
	}
	return fmt.Errorf("%s is empty: %s", name, v.Hint)
}

// ChoiceValue is one of Allowed, kept in a field of its own type (Get and
// Set convert).
type ChoiceValue struct {
	Allowed []string
	Default string
	Get     func(*Config) string
	Set     func(*Config, string)
}

func (v ChoiceValue) setDefault(c *Config) { v.Set(c, v.Default) }

func (v ChoiceValue) check(name string, c *Config) error {
	if got := v.Get(c); !slices.Contains(v.Allowed, got) {
		last := len(v.Allowed) - 1
		return fmt.Errorf("%s is %q: it must be %s or %s", name, got, strings.Join(v.Allowed[:last], ", "), v.Allowed[last])
	}
	return nil
}

// BoolValue is true or false.
type BoolValue struct {
	Field   func(*Config) *bool
	Default bool
}

func (v BoolValue) setDefault(c *Config)        { *v.Field(c) = v.Default }
func (v BoolValue) check(string, *Config) error { return nil }

// DurationValue is a duration, positive unless Off is set: then 0 turns
// the key off, and Off is what the error of a negative one advises.
type DurationValue struct {
	Field   func(*Config) *time.Duration
	Default time.Duration
	Off     string
}

// ZeroTurnsOff reports whether 0 is allowed (it turns the key off).
func (v DurationValue) ZeroTurnsOff() bool { return v.Off != "" }

func (v DurationValue) setDefault(c *Config) { *v.Field(c) = v.Default }

func (v DurationValue) check(name string, c *Config) error {
	d := *v.Field(c)
	switch {
	case v.Off == "" && d <= 0:
		return fmt.Errorf("%s is %s: it must be a positive duration such as 30s or 5m", name, d)
	case v.Off != "" && d < 0:
		return fmt.Errorf("%s is %s: %s", name, d, v.Off)
	}
	return nil
}

// DurationsValue is a list of durations of 0 or more.
type DurationsValue struct {
	Field   func(*Config) *[]time.Duration
	Default []time.Duration
}

func (v DurationsValue) setDefault(c *Config) { *v.Field(c) = slices.Clone(v.Default) }

func (v DurationsValue) check(name string, c *Config) error {
	for i, d := range *v.Field(c) {
		if d < 0 {
			return fmt.Errorf("%s entry %d is %s: waits cannot be negative", name, i+1, d)
		}
	}
	return nil
}

// IntValue is a whole number of at least Min. Rule is what the error of a
// smaller one advises ("": it must be at least Min, or 0 or more).
type IntValue struct {
	Field   func(*Config) *int
	Default int
	Min     int
	Rule    string
}

func (v IntValue) setDefault(c *Config) { *v.Field(c) = v.Default }

func (v IntValue) check(name string, c *Config) error {
	n := *v.Field(c)
	if n >= v.Min {
		return nil
	}
	rule := v.Rule
	switch {
	case rule != "":
	case v.Min == 0:
		rule = "it must be 0 or more"
	default:
		rule = fmt.Sprintf("it must be at least %d", v.Min)
	}
	return fmt.Errorf("%s is %d: %s", name, n, rule)
}

// NumberValue is a number of 0 or more; Rule is what the error of a
// negative one advises.
type NumberValue struct {
	Field   func(*Config) *float64
	Default float64
	Rule    string
}

func (v NumberValue) setDefault(c *Config) { *v.Field(c) = v.Default }

func (v NumberValue) check(name string, c *Config) error {
	if f := *v.Field(c); f < 0 {
		return fmt.Errorf("%s is %g: %s", name, f, v.Rule)
	}
	return nil
}

// FractionValue is a number above 0 and at most 1.
type FractionValue struct {
	Field   func(*Config) *float64
	Default float64
}

func (v FractionValue) setDefault(c *Config) { *v.Field(c) = v.Default }

func (v FractionValue) check(name string, c *Config) error {
	if f := *v.Field(c); f <= 0 || f > 1 {
		return fmt.Errorf("%s is %g: it must be a fraction above 0 and at most 1, such as 0.9", name, f)
	}
	return nil
}

// NamesValue is a list of names.
type NamesValue struct {
	Field   func(*Config) *[]string
	Default []string
}

func (v NamesValue) setDefault(c *Config)        { *v.Field(c) = slices.Clone(v.Default) }
func (v NamesValue) check(string, *Config) error { return nil }
