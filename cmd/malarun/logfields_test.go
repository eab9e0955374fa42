package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

func TestDropEmptyFields(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"level":"info","session":"","message":"resume"}` + "\n", `{"level":"info","message":"resume"}` + "\n"},
		{`{"session":"","a":1}`, `{"a":1}`},
		{`{"a":1,"session":""}`, `{"a":1}`},
		{`{"a":"","b":[],"c":{},"d":null}`, `{}`},
		{`{"a":"x","b":[],"c":"y","d":null,"e":[1]}`, `{"a":"x","c":"y","e":[1]}`},
		{`{"a":"\"\",\"b\":\"\"","b":""}`, `{"a":"\"\",\"b\":\"\""}`},
		{`{"a":{"x":""},"b":[""]}`, `{"a":{"x":""},"b":[""]}`}, // only the record's own fields
		{`{"a":"\\","b":""}`, `{"a":"\\"}`},
		{`{}`, `{}`},
		{`{"a":0,"b":false}`, `{"a":0,"b":false}`},
		{`not json`, `not json`},
		{`{"a":"unterminated`, `{"a":"unterminated`},
		{`{"a":`, `{"a":`},
	} {
		if got := string(dropEmptyFields([]byte(c.in))); got != c.want {
			t.Errorf("dropEmptyFields(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

// Random records: the output is the input's members without the empty
// ones, in their order, and valid JSON.
func TestDropEmptyFieldsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 49))
	values := []string{`""`, `[]`, `{}`, `null`, `"x"`, `"a\"b"`, `"\\"`, `"},{\"a\":\"\""`, `1`, `-2.5e3`, `true`, `[1,""]`, `{"k":""}`, `[[],{}]`}
	for range 2000 {
		var in, want []string
		for k := range r.IntN(6) {
			v := values[r.IntN(len(values))]
			m := fmt.Sprintf(`"k%d":%s`, k, v)
			in = append(in, m)
			if !emptyValue([]byte(v)) {
				want = append(want, m)
			}
		}
		line := "{" + strings.Join(in, ",") + "}\n"
		got := dropEmptyFields([]byte(line))
		if string(got) != "{"+strings.Join(want, ",")+"}\n" || !json.Valid(got) {
			t.Fatalf("dropEmptyFields(%s) = %s", line, got)
		}
	}
}

// Through zerolog, in both formats: a retry decision to give up names no
// session, and the console form shows no "session=".
func TestLogLinesHaveNoEmptyFields(t *testing.T) {
	for _, format := range []string{"json", "console"} {
		var buf bytes.Buffer
		log, err := newLogger(&buf, false, format, "info", zerolog.InfoLevel, false, func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		log.Info().Int("attempt", 1).Str("action", "fail").Str("session", "").Strs("tools_running", nil).Ints("left", []int{}).Msg("retry decision")
		out := buf.String()
		if strings.Contains(out, "session") || strings.Contains(out, "tools_running") || strings.Contains(out, "left") || !strings.Contains(out, "fail") {
			t.Errorf("%s: %s", format, out)
		}
	}
}
