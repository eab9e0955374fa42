package main

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

func stringKey(name, help string, field func(*settings) *string) keySpec {
	return keySpec{
		name: name, kind: "string", help: help, stringOnly: true,
		parse: func(s *settings, raw string) error { *field(s) = raw; return nil },
		format: func(s *settings) string {
			if v := *field(s); v != "" {
				return v
			}
			return `""`
		},
	}
}

func durationKey(name string, zeroDisables bool, help string, field func(*settings) *time.Duration) keySpec {
	return keySpec{
		name: name, kind: "duration", help: help,
		parse: func(s *settings, raw string) error {
			d, err := parseDuration(raw, zeroDisables)
			if err != nil {
				return err
			}
			*field(s) = d
			return nil
		},
		format: func(s *settings) string { return formatDuration(*field(s)) },
	}
}

func boolKey(name, help string, field func(*settings) *bool) keySpec {
	return keySpec{
		name: name, kind: "bool", help: help,
		parse: func(s *settings, raw string) error {
			b, err := strconv.ParseBool(strings.TrimSpace(raw))
			if err != nil {
				return errors.New("not a boolean; use true or false")
			}
			*field(s) = b
			return nil
		},
		format: func(s *settings) string { return strconv.FormatBool(*field(s)) },
	}
}

func enumKey(name string, allowed []string, help string, get func(*settings) string, set func(*settings, string)) keySpec {
	return keySpec{
		name: name, kind: strings.Join(allowed, "|"), help: help, stringOnly: true,
		parse: func(s *settings, raw string) error {
			v := strings.TrimSpace(raw)
			if !slices.Contains(allowed, v) {
				return fmt.Errorf("must be one of %s", strings.Join(allowed, ", "))
			}
			set(s, v)
			return nil
		},
		format: get,
	}
}

// intKey takes a whole number of at least minimum.
func intKey(name string, minimum int, help string, field func(*settings) *int) keySpec {
	return keySpec{
		name: name, kind: "integer", help: help,
		parse: func(s *settings, raw string) error {
			n, err := strconv.Atoi(strings.TrimSpace(raw))
			if err != nil {
				return errors.New("not a whole number")
			}
			if n < minimum {
				return fmt.Errorf("must be at least %d", minimum)
			}
			*field(s) = n
			return nil
		},
		format: func(s *settings) string { return strconv.Itoa(*field(s)) },
	}
}

// floatKey takes a number of 0 or more.
func floatKey(name, help string, field func(*settings) *float64) keySpec {
	return keySpec{
		name: name, kind: "number", help: help,
		parse: func(s *settings, raw string) error {
			f, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return errors.New("not a number")
			}
			if f < 0 {
				return errors.New("must not be negative")
			}
			*field(s) = f
			return nil
		},
		format: func(s *settings) string { return strconv.FormatFloat(*field(s), 'f', -1, 64) },
	}
}

// fractionKey takes a number above 0 and at most 1.
func fractionKey(name, help string, field func(*settings) *float64) keySpec {
	k := floatKey(name, help, field)
	k.kind = "fraction"
	parse := k.parse
	k.parse = func(s *settings, raw string) error {
		old := *field(s)
		if err := parse(s, raw); err != nil {
			return err
		}
		if f := *field(s); f <= 0 || f > 1 {
			*field(s) = old
			return errors.New("must be above 0 and at most 1, such as 0.9")
		}
		return nil
	}
	return k
}

// durationListKey takes durations of 0 or more, comma-separated in a flag or
// env var ("0s,5s,15s"), a YAML list in a file.
func durationListKey(name, help string, field func(*settings) *[]time.Duration) keySpec {
	return keySpec{
		name: name, kind: "durations", help: help, list: true,
		parse: func(s *settings, raw string) error {
			var ds []time.Duration
			for i, e := range splitList(raw) {
				d, err := parseDuration(e, true)
				if err != nil {
					return fmt.Errorf("entry %d: %w", i+1, err)
				}
				ds = append(ds, d)
			}
			*field(s) = ds
			return nil
		},
		format: func(s *settings) string {
			var parts []string
			for _, d := range *field(s) {
				parts = append(parts, formatDuration(d))
			}
			return "[" + strings.Join(parts, ", ") + "]"
		},
	}
}

// stringListKey takes names, comma-separated in a flag or env var, a YAML
// list in a file.
func stringListKey(name, help string, field func(*settings) *[]string) keySpec {
	return keySpec{
		name: name, kind: "list", help: help, list: true,
		parse: func(s *settings, raw string) error {
			*field(s) = splitList(raw)
			return nil
		},
		format: func(s *settings) string { return "[" + strings.Join(*field(s), ", ") + "]" },
	}
}

// splitList splits "a, b,c" (optionally in brackets, as YAML writes it) into
// its trimmed, non-empty entries.
func splitList(raw string) []string {
	raw = strings.TrimSpace(raw)
	if strings.HasPrefix(raw, "[") && strings.HasSuffix(raw, "]") {
		raw = raw[1 : len(raw)-1]
	}
	list := []string{}
	for e := range strings.SplitSeq(raw, ",") {
		if e = strings.TrimSpace(e); e != "" {
			list = append(list, e)
		}
	}
	return list
}

// parseDuration insists on units: viper would read a bare 300 as 300ns and an
// unparsable value as 0, which would disable hang detection without a word.
func parseDuration(raw string, zeroDisables bool) (time.Duration, error) {
	s := strings.TrimSpace(raw)
	if isBareNumber(s) {
		if zeroDisables {
			if f, err := strconv.ParseFloat(s, 64); err == nil && f == 0 {
				return 0, nil
			}
		}
		return 0, fmt.Errorf("%s needs a unit, e.g. %s", s, unitExample(s))
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, errors.New("not a duration; use a number with a unit (ns, us, ms, s, m, h), e.g. 30s, 5m or 1h30m")
	}
	if d < 0 {
		return 0, errors.New("must not be negative")
	}
	if d == 0 && !zeroDisables {
		return 0, errors.New("must be positive, e.g. 30s or 5m")
	}
	return d, nil
}

// isBareNumber reports whether s is a decimal number without a unit
// ("300", "-5", "1.5"). strconv.ParseFloat is not used: it accepts "inf".
func isBareNumber(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	digits, dots := 0, 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == '.':
			dots++
		default:
			return false
		}
	}
	return digits > 0 && dots <= 1
}

func unitExample(n string) string {
	if i, err := strconv.Atoi(n); err == nil && i > 0 && i%60 == 0 {
		return fmt.Sprintf("%ds or %dm", i, i/60)
	}
	return n + "s or " + n + "m"
}

// formatDuration drops the zero parts time.Duration.String keeps: 3m, not 3m0s.
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
