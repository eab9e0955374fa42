package main

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/malarun/malarun/internal/testing/schemacheck"
	"github.com/malarun/malarun/internal/ui"

	"github.com/malarun/malarun/internal/outcome"
)

func loadSchema(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile(repoPath("docs/report.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&schema); err != nil {
		t.Fatalf("report.schema.json: %v", err)
	}
	return schema
}

// checkReport validates stdout against the schema, then decodes it
// strictly, and returns the report.
func checkReport(t *testing.T, stdout string) ui.Report {
	t.Helper()
	var v any
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("stdout is not one JSON value: %v\n%s", err, stdout)
	}
	if dec.More() {
		t.Fatalf("stdout holds more than one JSON value:\n%s", stdout)
	}
	for _, e := range schemacheck.Validate(loadSchema(t), v, "report") {
		t.Errorf("schema: %s", e)
	}
	var r ui.Report
	strict := json.NewDecoder(strings.NewReader(stdout))
	strict.DisallowUnknownFields()
	if err := strict.Decode(&r); err != nil {
		t.Fatalf("strict decode: %v", err)
	}
	return r
}

func TestJSONReport(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		scenario func(*testing.T) scenario
		code     int
		check    func(t *testing.T, r ui.Report)
	}{
		{"success", scenarioSuccess, 0, func(t *testing.T, r ui.Report) {
			if r.Outcome != "success" || r.Reason != "" || r.Result != "All done." || len(r.Attempts) != 1 ||
				r.Tokens.InputTokens != 2000 || r.Tokens.OutputTokens != 20 || r.CostUSD != 0.0105 || r.Attempts[0].Ended != "exited" {
				t.Errorf("report: %+v", r)
			}
		}},
		{"hang resumed", scenarioHangResumed, 0, func(t *testing.T, r ui.Report) {
			if r.Outcome != "success" || r.Result != "All done." || len(r.Attempts) != 2 || r.AttemptsTotal != 2 || len(r.Sessions) != 1 {
				t.Fatalf("report: %+v", r)
			}
			a1, a2 := r.Attempts[0], r.Attempts[1]
			if a1.Ended != "hang" || a1.Outcome != "hang" || a1.Resume || !a2.Resume || a2.Outcome != "success" ||
				a1.Session != a2.Session || a2.Session != r.SessionID || a2.Start.Before(a1.End) {
				t.Errorf("attempts: %+v", r.Attempts)
			}
		}},
		{"failure", scenarioFailure, 3, func(t *testing.T, r ui.Report) {
			if r.Outcome != "retries_exhausted" || r.Result != "" || !strings.Contains(r.Reason, "no output for 1s") ||
				len(r.Attempts) != 1 || r.Attempts[0].Ended != "hang" {
				t.Errorf("report: %+v", r)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := tt.scenario(t).proc(t, "issue-json", "--json")
			code := p.run()
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tt.code, p.stderr.String())
			}
			r := checkReport(t, p.stdout.String())
			// The streamed report is what json.MarshalIndent wrote before.
			if b, _ := json.MarshalIndent(r, "", "  "); p.stdout.String() != string(b)+"\n" {
				t.Errorf("stdout is not the indented report:\n%s\nwant\n%s", p.stdout.String(), b)
			}
			if r.Version != 1 || r.Issue != "issue-json" || r.ExitCode != tt.code || r.DurationMS <= 0 ||
				time.Since(r.Started) > time.Minute || r.Record == "" || !strings.HasPrefix(r.RunDir, p.stateDir) {
				t.Errorf("report: %+v", r)
			}
			for _, a := range r.Attempts {
				if _, err := os.Stat(a.Transcript); err != nil {
					t.Errorf("attempt %d: transcript: %v", a.N, err)
				}
			}
			if _, err := os.Stat(r.Record); err != nil {
				t.Errorf("record: %v", err)
			}
			tt.check(t, r)
		})
	}
}

// TestSchemaMatchesReport: the schema's properties are the report's JSON
// fields, the outcome enum is the exit code table's, and docs/json-report.md
// documents every field.
func TestSchemaMatchesReport(t *testing.T) {
	schema := loadSchema(t)
	props := schema["properties"].(map[string]any)
	attemptProps := props["attempts"].(map[string]any)["items"].(map[string]any)["properties"].(map[string]any)
	fields := func(v any) []string {
		b, _ := json.Marshal(v)
		var m map[string]any
		json.Unmarshal(b, &m)
		var names []string
		for k := range m {
			names = append(names, k)
		}
		sort.Strings(names)
		return names
	}
	keys := func(m map[string]any) []string {
		var names []string
		for k := range m {
			names = append(names, k)
		}
		sort.Strings(names)
		return names
	}
	// Fields left out when empty (a usage limit's, a cut result's, failed
	// outputs) are filled in, so that every field the report can carry is compared.
	full := ui.Report{RetryAt: time.Unix(1, 0), LimitType: "five_hour", ResultTruncated: true, OutputFailures: []ui.OutputFailure{{}},
		NoResponse: &ui.NoResponse{}, ResultsLost: 1}
	if got, want := keys(props), fields(full); !slices.Equal(got, want) {
		t.Errorf("schema properties %q, report fields %q", got, want)
	}
	if got, want := keys(attemptProps), fields(ui.Attempt{NoResponse: &ui.NoResponse{}, ResultsLost: 1}); !slices.Equal(got, want) {
		t.Errorf("schema attempt properties %q, attempt fields %q", got, want)
	}
	resultProps := attemptProps["results"].(map[string]any)["items"].(map[string]any)["properties"].(map[string]any)
	one := 1
	fullResult := ui.Result{TerminalReason: "completed", APIErrorStatus: 500, Origin: "task-notification", AfterStop: true, ResultIndex: &one, NumTurns: &one,
		QueuedTurnCount: 1, ResumeReason: "interrupted_turn", StartupFailureReason: "proxy_invalid", APIError: "no_response"}
	if got, want := keys(resultProps), fields(fullResult); !slices.Equal(got, want) {
		t.Errorf("schema result properties %q, result fields %q", got, want)
	}
	var outcomes []string
	for _, o := range props["outcome"].(map[string]any)["enum"].([]any) {
		outcomes = append(outcomes, o.(string))
	}
	want := []string{string(outcome.Usage), string(outcome.Error)}
	for _, r := range exitCodes() {
		want = append(want, string(r.outcome))
	}
	slices.Sort(outcomes)
	slices.Sort(want)
	if want = slices.Compact(want); !slices.Equal(outcomes, want) {
		t.Errorf("schema outcomes %q, exit code table %q", outcomes, want)
	}
	readme, err := os.ReadFile(repoPath("docs/json-report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range append(append(keys(props), keys(attemptProps)...), outcomes...) {
		if !strings.Contains(string(readme), "`"+name+"`") {
			t.Errorf("docs/json-report.md does not document `%s`", name)
		}
	}
}
