package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func decodeContract(t *testing.T, s string) exitCodesDoc {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	var doc exitCodesDoc
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("exit-codes --json: %v\n%s", err, s)
	}
	return doc
}

// TestExitCodesJSON: the document is the table, row for row.
func TestExitCodesJSON(t *testing.T) {
	o := newCLI(t).run("exit-codes", "--json")
	if o.code != 0 || o.calls != 0 || o.stderr != "" {
		t.Fatalf("code %d, calls %d, stderr %q", o.code, o.calls, o.stderr)
	}
	doc := decodeContract(t, o.stdout)
	rows := exitCodes()
	if doc.Version != 1 || len(doc.Codes) != len(rows) {
		t.Fatalf("version %d, %d codes; want 1, %d", doc.Version, len(doc.Codes), len(rows))
	}
	for i, r := range rows {
		want := exitCodeDoc{r.code, string(r.outcome), r.doc, string(r.retry), string(r.next)}
		if doc.Codes[i] != want {
			t.Errorf("code %d: got %+v, want %+v", r.code, doc.Codes[i], want)
		}
	}
}

// TestExitCodeContract is the contract schedulers rely on, written out
// independently of the table: which codes a retry helps and what the next
// invocation does.
func TestExitCodeContract(t *testing.T) {
	type rn struct{ retry, next string }
	// A code with two outcomes (1: error_result, error) has a row for each.
	type row struct {
		code    int
		outcome string
	}
	want := map[row]rn{
		{0, "success"}: {"never", "starts_over"}, {1, "error_result"}: {"never", "starts_over"},
		{1, "error"}: {"never", "as_recorded"}, {2, "usage"}: {"never", "unchanged"},
		{3, "retries_exhausted"}: {"now", "resumes"}, {4, "not_safe_to_retry"}: {"never", "starts_over"},
		{5, "context_exhausted"}: {"never", "starts_over"}, {6, "poisoned"}: {"never", "refused"},
		{7, "busy"}: {"never", "unchanged"}, {8, "auth"}: {"never", "starts_over"},
		{9, "budget"}: {"never", "starts_over"}, {10, "api_unreachable"}: {"never", "starts_over"},
		{75, "rate_limit"}:       {"after_retry_at", "resumes"},
		{124, "session_timeout"}: {"now", "resumes"}, {127, "start_failed"}: {"never", "starts_over"},
		{129, "interrupted"}: {"now", "resumes"}, {130, "interrupted"}: {"now", "resumes"},
		{131, "interrupted"}: {"now", "resumes"}, {143, "interrupted"}: {"now", "resumes"},
	}
	got := map[row]rn{}
	for _, c := range contract().Codes {
		got[row{c.Code, c.Outcome}] = rn{c.Retry, c.NextInvocation}
	}
	for r, w := range want {
		if got[r] != w {
			t.Errorf("code %d (%s): retry %q, next %q; want %q, %q", r.code, r.outcome, got[r].retry, got[r].next, w.retry, w.next)
		}
	}
	// One code means one thing to a scheduler: its rows agree on retry.
	retryOf := map[int]string{}
	for _, c := range contract().Codes {
		if r, ok := retryOf[c.Code]; ok && r != c.Retry {
			t.Errorf("code %d: rows disagree on retry (%q, %q): a scheduler sees only the code", c.Code, r, c.Retry)
		}
		retryOf[c.Code] = c.Retry
	}
	if len(got) != len(want) {
		t.Errorf("%d codes in the contract, want %d", len(got), len(want))
	}
	// A code a retry can help must leave something to continue.
	for _, c := range contract().Codes {
		if c.Retry != "never" && c.NextInvocation != "resumes" {
			t.Errorf("code %d: a retry (%s) that does not resume would start the work over", c.Code, c.Retry)
		}
	}
}

func TestExitCodesText(t *testing.T) {
	o := newCLI(t).run("exit-codes")
	if o.code != 0 || o.stderr != "" {
		t.Fatalf("code %d, stderr %q", o.code, o.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(o.stdout, "\n"), "\n")
	if len(lines) != len(exitCodes())+1 || strings.Join(strings.Fields(lines[0]), " ") != "CODE OUTCOME RETRY NEXT INVOCATION MEANING" {
		t.Fatalf("output:\n%s", o.stdout)
	}
	for i, r := range exitCodes() {
		want := []string{strconv.Itoa(r.code), string(r.outcome), string(r.retry), string(r.next)}
		want = append(want, strings.Fields(r.doc)...)
		if got := strings.Fields(lines[i+1]); !slices.Equal(got, want) {
			t.Errorf("line %d: %q, want the fields %q", i+1, lines[i+1], want)
		}
	}
}

func TestExitCodesUsage(t *testing.T) {
	newCLI(t).run("exit-codes", "extra").wantUsage(t, `unknown command "extra"`)
	newCLI(t).run("exit-codes", "--prompt", "x").wantUsage(t, "unknown flag: --prompt")
	// The command's name cannot be an issue id, in any case.
	newCLI(t).run("Exit-Codes", "--prompt", "P").wantUsage(t, `"Exit-Codes" is reserved`)
}

// TestExitCodesInStep keeps docs/exit-codes.md's table, --help and exit-codes in
// step: the same codes, and where the page has a column for it, the same
// outcome, retry and next invocation.
func TestExitCodesInStep(t *testing.T) {
	// Read before newCLI moves the test into an empty directory.
	readme, err := os.ReadFile("../../docs/exit-codes.md")
	if err != nil {
		t.Fatal(err)
	}
	var codes []int
	for _, c := range contract().Codes {
		codes = append(codes, c.Code)
	}

	help := newCLI(t).run("--help").stdout
	_, section, ok := strings.Cut(help, "\nExit codes:\n")
	if !ok {
		t.Fatalf("--help has no exit code section:\n%s", help)
	}
	// A row is "  CODE  meaning", the meaning wrapped onto lines indented
	// under it (helpWidth).
	var helpCodes []int
	var docs []string
	for line := range strings.SplitSeq(strings.TrimSuffix(section, "\n"), "\n") {
		f := strings.Fields(line)
		n, err := strconv.Atoi(f[0])
		switch {
		case err == nil && strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   "):
			helpCodes = append(helpCodes, n)
			docs = append(docs, strings.Join(f[1:], " "))
		case len(docs) > 0 && strings.HasPrefix(line, "       "):
			docs[len(docs)-1] += " " + strings.Join(f, " ")
		default:
			t.Fatalf("--help exit code line %q", line)
		}
	}
	for i, doc := range docs {
		if i < len(contract().Codes) && doc != contract().Codes[i].Meaning {
			t.Errorf("--help says %d means %q; exit-codes says %q", helpCodes[i], doc, contract().Codes[i].Meaning)
		}
	}
	if !slices.Equal(helpCodes, codes) {
		t.Errorf("--help lists the codes %v; exit-codes %v", helpCodes, codes)
	}

	table, err := readmeExitCodes(readme)
	if err != nil {
		t.Fatal(err)
	}
	var readmeCodes []int
	for _, row := range table {
		readmeCodes = append(readmeCodes, row.code)
	}
	if !slices.Equal(readmeCodes, codes) {
		t.Errorf("docs/exit-codes.md's exit code table lists %v; exit-codes %v", readmeCodes, codes)
	}
	for i, c := range contract().Codes {
		if i >= len(table) || table[i].code != c.Code {
			break
		}
		want := map[string]string{"outcome": c.Outcome, "retry": c.Retry, "next invocation": c.NextInvocation}
		for col, v := range table[i].cells {
			if w, ok := want[col]; ok && v != w {
				t.Errorf("docs/exit-codes.md: code %d, %s %q; exit-codes says %q", c.Code, col, v, w)
			}
		}
	}
}

// readmeRow is one code of docs/exit-codes.md's exit code table, with its cells by
// column name (lower case, backquotes dropped).
type readmeRow struct {
	code  int
	cells map[string]string
}

// readmeExitCodes parses the table under "## Exit codes". A row for two
// codes ("130 / 143") stands for each.
func readmeExitCodes(readme []byte) ([]readmeRow, error) {
	_, rest, ok := bytes.Cut(readme, []byte("\n## Exit codes\n"))
	if !ok {
		return nil, fmt.Errorf(`docs/exit-codes.md has no "## Exit codes" section`)
	}
	var header []string
	var rows []readmeRow
	sep := regexp.MustCompile(`^\|[\s:|-]+\|$`)
	for line := range strings.SplitSeq(string(rest), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			if header != nil {
				break // the end of the table
			}
			continue
		}
		if sep.MatchString(line) {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(strings.ReplaceAll(cells[i], "`", ""))
		}
		if header == nil {
			for _, c := range cells {
				header = append(header, strings.ToLower(c))
			}
			if len(header) == 0 || header[0] != "code" {
				return nil, fmt.Errorf("docs/exit-codes.md's exit code table starts with %q, want a code column", header)
			}
			continue
		}
		if len(cells) != len(header) {
			return nil, fmt.Errorf("docs/exit-codes.md exit code row %q has %d cells for %d columns", line, len(cells), len(header))
		}
		byName := map[string]string{}
		for i, h := range header {
			byName[h] = cells[i]
		}
		for s := range strings.SplitSeq(cells[0], "/") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil {
				return nil, fmt.Errorf("docs/exit-codes.md exit code row %q: %v", line, err)
			}
			rows = append(rows, readmeRow{code: n, cells: byName})
		}
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("docs/exit-codes.md's exit code table is empty")
	}
	return rows, nil
}

// A combined row carries the same cells for both codes: docs/exit-codes.md writes
// 130 and 143 on one line, so their outcome, retry and next invocation must
// agree in the table for that line to be true.
func TestReadmeExitCodesParser(t *testing.T) {
	readme := "intro\n## Exit codes\n\n| code | Outcome | retry | meaning |\n| ---: | --- | --- | --- |\n" +
		"| 0 | `success` | never | done |\n| 130 / 143 | `interrupted` | now | stopped |\n\n## Next\n| 9 | x | y | z |\n"
	rows, err := readmeExitCodes([]byte(readme))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%d %s %s", r.code, r.cells["outcome"], r.cells["retry"]))
	}
	want := []string{"0 success never", "130 interrupted now", "143 interrupted now"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, bad := range []string{"no section", "## Exit codes\n| meaning | code |\n| 0 | x |\n", "## Exit codes\n| code | meaning |\n| x | y |\n", "## Exit codes\n| code | meaning |\n| 0 |\n"} {
		if _, err := readmeExitCodes([]byte(bad)); err == nil {
			t.Errorf("no error for %q", bad)
		}
	}
	for _, c := range contract().Codes {
		if c.Code == 129 || c.Code == 130 || c.Code == 131 || c.Code == 143 {
			if c.Outcome != "interrupted" || c.Retry != "now" || c.NextInvocation != "resumes" {
				t.Errorf("code %d differs from its docs/exit-codes.md row partners: %+v", c.Code, c)
			}
		}
	}
}
