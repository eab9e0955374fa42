package deploy_test

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rhysd/actionlint"
)

// loadWorkflow parses a workflow with actionlint, which is strict: an
// unknown key or a value of the wrong type is an error.
func loadWorkflow(t *testing.T, name string) *actionlint.Workflow {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("github-actions", name))
	if err != nil {
		t.Fatal(err)
	}
	wf, errs := actionlint.Parse(b)
	for _, e := range errs {
		t.Errorf("%s: %v", name, e)
	}
	if wf == nil {
		t.FailNow()
	}
	return wf
}

// TestActionlint lints every workflow as `make deploy-test` does, so that
// `go test` alone catches the same mistakes.
func TestActionlint(t *testing.T) {
	files, err := filepath.Glob("github-actions/*.yml")
	if err != nil || len(files) < 2 {
		t.Fatalf("workflows: %v, %v", files, err)
	}
	l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	errs, err := l.LintFiles(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		t.Errorf("%s:%d:%d: %s [%s]", e.Filepath, e.Line, e.Column, e.Message, e.Kind)
	}
}

func TestActionsWorkflow(t *testing.T) {
	wf := loadWorkflow(t, "malarun.yml")
	checkActions(wf, makefileCLIVersion(t)).report(t, "github-actions/malarun.yml")

	env := map[string]string{}
	for _, v := range wf.Env.Vars {
		// MALARUN_VERSION is the workflow's own: which malarun to install.
		if name := v.Name.Value; strings.HasPrefix(name, "MALARUN_") && name != "MALARUN_VERSION" {
			env[name] = v.Value.Value
			if _, ok := deploy.keys[envKey(name)]; !ok {
				t.Errorf("env %s names no configuration key of malarun: it would be ignored", name)
			}
		}
	}
	validateConfig(t, "", env)
}

// checkActions: one job per issue that never cancels another, ends after
// malarun did, and keeps what the next attempt needs whatever happened.
func checkActions(wf *actionlint.Workflow, cli string) (p problems) {
	dispatch := false
	for _, e := range wf.On {
		if d, ok := e.(*actionlint.WorkflowDispatchEvent); ok && d.Inputs["issues"] != nil {
			dispatch = true
		}
	}
	if !dispatch {
		p.add("no workflow_dispatch with an issues input: the requeue workflow dispatches it that way")
	}
	if wf.RunName == nil || !strings.Contains(wf.RunName.Value, "inputs.issues") {
		p.add("run-name does not name the issues: the requeue workflow finds the runs in progress by it")
	}
	envOf := func(name string) string {
		if wf.Env != nil {
			if v, ok := wf.Env.Vars[strings.ToLower(name)]; ok {
				return v.Value.Value
			}
		}
		return ""
	}
	if cli != "" && envOf("CLAUDE_CODE_VERSION") != cli {
		p.add("CLAUDE_CODE_VERSION %q, but the Makefile's current version is %s", envOf("CLAUDE_CODE_VERSION"), cli)
	}
	if len(wf.Jobs) != 1 {
		p.add("%d jobs, want one (a matrix over issues)", len(wf.Jobs))
		return p
	}
	var job *actionlint.Job
	for _, j := range wf.Jobs {
		job = j
	}
	if s := job.Strategy; s == nil || s.Matrix == nil || s.Matrix.Rows["issue"] == nil {
		p.add("no matrix over issue")
	} else if s.FailFast == nil || s.FailFast.Value || s.FailFast.Expression != nil {
		p.add("fail-fast is not false: one issue's failure would cancel the others")
	}
	if c := job.Concurrency; c == nil || c.Group == nil || !strings.Contains(c.Group.Value, "matrix.issue") {
		p.add("no concurrency group per issue: two runs could hold one issue (the second exits 7)")
	} else if c.CancelInProgress == nil || c.CancelInProgress.Value || c.CancelInProgress.Expression != nil {
		p.add("cancel-in-progress is not false: a new dispatch would interrupt a run")
	}

	// The steps: restore, run, then keep everything whatever happened.
	var restore, save, upload, run, replay *actionlint.Step
	runAt := -1
	for i, st := range job.Steps {
		switch e := st.Exec.(type) {
		case *actionlint.ExecAction:
			switch uses := e.Uses.Value; {
			case strings.HasPrefix(uses, "actions/cache/restore@"):
				restore = st
			case strings.HasPrefix(uses, "actions/cache/save@"):
				save = st
			case strings.HasPrefix(uses, "actions/upload-artifact@"):
				upload = st
			case strings.HasPrefix(uses, "actions/cache@"):
				p.add("actions/cache saves only when the job succeeds: use cache/restore and cache/save")
			}
		case *actionlint.ExecRun:
			if strings.Contains(e.Run.Value, "matrix.issue") {
				p.add("step %q puts ${{ matrix.issue }} into a script: pass it in the environment", stepName(st))
			}
			if regexp.MustCompile(`(?m)^\s*malarun\s+show\s.*--format html\s*>\s*\S*show\.html`).MatchString(e.Run.Value) {
				replay = st
			} else if regexp.MustCompile(`(?m)^\s*malarun\s`).MatchString(e.Run.Value) {
				run, runAt = st, i
			} else if runAt >= 0 && strings.Contains(e.Run.Value, "git push") && !always(st) {
				p.add("step %q keeps the work but runs only on success", stepName(st))
			}
		}
	}
	if run == nil {
		p.add("no step runs malarun")
		return p
	}
	p = append(p, checkActionsOTel(wf, job, run)...)
	script := run.Exec.(*actionlint.ExecRun).Run.Value
	for _, flag := range []string{"--json", "--events"} {
		if !strings.Contains(script, flag) {
			p.add("malarun runs without %s", flag)
		}
	}
	inputs := func(st *actionlint.Step, name string) string {
		if st == nil {
			return ""
		}
		if in, ok := st.Exec.(*actionlint.ExecAction).Inputs[name]; ok {
			return in.Value.Value
		}
		return ""
	}
	key, prefix := inputs(restore, "key"), inputs(restore, "restore-keys")
	switch {
	case restore == nil:
		p.add("no actions/cache/restore: the next attempt would start the issue over")
	case !strings.Contains(key, "github.run_id") || !strings.Contains(key, "github.run_attempt"):
		p.add("the cache key %q is not per attempt: a key cannot be overwritten, so a re-run could not save", key)
	case prefix == "" || !strings.HasPrefix(key, strings.TrimSpace(prefix)):
		p.add("restore-keys %q is not a prefix of the key %q: the last attempt's state would not be found", prefix, key)
	}
	for _, want := range []string{".local/state/malarun", ".claude/projects"} {
		if !strings.Contains(inputs(restore, "path"), want) || !strings.Contains(inputs(save, "path"), want) {
			p.add("%s is not restored and saved: the next attempt needs it", want)
		}
	}
	if save == nil || !always(save) || inputs(save, "key") != key {
		p.add("actions/cache/save does not run always() under the restore step's key")
	}
	if upload == nil || !always(upload) || !strings.Contains(inputs(upload, "path"), "report.json") || !strings.Contains(inputs(upload, "path"), "events.jsonl") {
		p.add("the report and events are not uploaded always()")
	}
	if replay == nil || !always(replay) || !strings.Contains(inputs(upload, "path"), "show.html") {
		p.add("the replay (malarun show --format html > show.html, always()) is not uploaded")
	}

	// Timeouts: malarun's session_timeout ends the run first (exit 124, the
	// run recorded), then the step's limit, then the job's, leaving time for
	// the steps that keep the state.
	session, err := time.ParseDuration(envOf("MALARUN_SESSION_TIMEOUT"))
	if err != nil || session <= 0 {
		p.add("MALARUN_SESSION_TIMEOUT %q: set it below the step's timeout-minutes", envOf("MALARUN_SESSION_TIMEOUT"))
	}
	grace, err := time.ParseDuration(envOf("MALARUN_SHUTDOWN_GRACE"))
	if err != nil || grace > 7*time.Second {
		p.add("MALARUN_SHUTDOWN_GRACE %q: GitHub sends SIGTERM 7.5 s after SIGINT, the CLI must be stopped before", envOf("MALARUN_SHUTDOWN_GRACE"))
	}
	minutes := func(f *actionlint.Float) time.Duration {
		if f == nil {
			return 0
		}
		return time.Duration(f.Value * float64(time.Minute))
	}
	stepLimit, jobLimit := minutes(run.TimeoutMinutes), minutes(job.TimeoutMinutes)
	if stepLimit <= session+grace {
		p.add("the malarun step's timeout-minutes (%v) is not above session_timeout %v + shutdown_grace %v", stepLimit, session, grace)
	}
	if jobLimit < stepLimit+5*time.Minute {
		p.add("the job's timeout-minutes (%v) leaves under 5 minutes after the malarun step's (%v) to keep the state", jobLimit, stepLimit)
	}
	return p
}

func always(st *actionlint.Step) bool {
	return st.If != nil && strings.Contains(st.If.Value, "always()")
}

func stepName(st *actionlint.Step) string {
	if st.Name != nil {
		return st.Name.Value
	}
	return fmt.Sprint(st.Pos)
}

// TestRequeueWorkflow: scheduled, it dispatches the issue workflow for the
// outcomes the contract retries after retry_at, reading fields the report
// has.
func TestRequeueWorkflow(t *testing.T) {
	wf := loadWorkflow(t, "malarun-requeue.yml")
	scheduled := false
	for _, e := range wf.On {
		if _, ok := e.(*actionlint.ScheduledEvent); ok {
			scheduled = true
		}
	}
	if !scheduled {
		t.Error("the requeue workflow is not scheduled")
	}
	var script string
	for _, j := range wf.Jobs {
		for _, st := range j.Steps {
			if r, ok := st.Exec.(*actionlint.ExecRun); ok {
				script += r.Run.Value
			}
		}
	}
	if !strings.Contains(script, "gh workflow run malarun.yml") {
		t.Error("the requeue workflow does not dispatch malarun.yml")
	}
	if _, err := os.Stat("github-actions/malarun.yml"); err != nil {
		t.Error(err)
	}
	for _, ec := range deploy.contract {
		if ec.Retry == retryAfterRetryAt && !strings.Contains(script, ec.Outcome) {
			t.Errorf("exit %d (%s) is retried after retry_at, but the requeue does not look for its outcome", ec.Code, ec.Outcome)
		}
	}
	fields := reportFields(t)
	for _, m := range regexp.MustCompile(`\.(\w+) //`).FindAllStringSubmatch(script, -1) {
		if !fields[m[1]] {
			t.Errorf("the requeue reads .%s, which the report (docs/report.schema.json) does not have", m[1])
		}
	}
}

// reportFields are the top-level properties of the --json report.
func reportFields(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("../docs/report.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	fields := map[string]bool{}
	for k := range schema.Properties {
		fields[k] = true
	}
	if len(fields) < 5 {
		t.Fatalf("docs/report.schema.json: %d properties", len(fields))
	}
	return fields
}

func TestActionsChecksCatch(t *testing.T) {
	b, err := os.ReadFile("github-actions/malarun.yml")
	if err != nil {
		t.Fatal(err)
	}
	good := string(b)
	tests := []struct{ name, old, new, want string }{
		{"fail fast", "fail-fast: false", "fail-fast: true", "fail-fast is not false"},
		{"cancel in progress", "cancel-in-progress: false", "cancel-in-progress: true", "cancel-in-progress is not false"},
		{"one group for all", "group: malarun-${{ matrix.issue }}", "group: malarun", "no concurrency group per issue"},
		{"cache saved on success only", "      - name: Save the issue's state\n        if: always()\n", "      - name: Save the issue's state\n", "does not run always()"},
		{"key per run", "key: malarun-${{ matrix.issue }}-${{ github.run_id }}-${{ github.run_attempt }}\n          restore-keys",
			"key: malarun-${{ matrix.issue }}-${{ github.run_id }}\n          restore-keys", "is not per attempt"},
		{"sessions not kept", "            ~/.claude/projects\n          key: malarun-${{ matrix.issue }}-${{ github.run_id }}-${{ github.run_attempt }}\n          restore-keys",
			"          key: malarun-${{ matrix.issue }}-${{ github.run_id }}-${{ github.run_attempt }}\n          restore-keys", ".claude/projects is not restored"},
		{"job ends first", "timeout-minutes: 75", "timeout-minutes: 60", "leaves under 5 minutes"},
		{"malarun outlives its step", "MALARUN_SESSION_TIMEOUT: 50m", "MALARUN_SESSION_TIMEOUT: 2h", "is not above session_timeout"},
		{"no session timeout", "MALARUN_SESSION_TIMEOUT: 50m", "MALARUN_SESSION_TIMEOUT: 0s", "MALARUN_SESSION_TIMEOUT \"0s\""},
		{"slow stop", "MALARUN_SHUTDOWN_GRACE: 5s", "MALARUN_SHUTDOWN_GRACE: 30s", "7.5 s after SIGINT"},
		{"another CLI", "CLAUDE_CODE_VERSION: 2.1.332", "CLAUDE_CODE_VERSION: 2.1.100", "current version is 2.1.332"},
		{"no report", `--json --events "$RUNNER_TEMP/events.jsonl"`, `--events "$RUNNER_TEMP/events.jsonl"`, "without --json"},
		{"replay on success only", "      - name: Replay the run\n        if: always()\n", "      - name: Replay the run\n", "replay"},
		{"replay not uploaded", "            ${{ runner.temp }}/show.html\n", "", "replay"},
		{"issue in a script", `malarun "$ISSUE" --prompt`, `malarun "${{ matrix.issue }}" --prompt`, "puts ${{ matrix.issue }} into a script"},
		// Telemetry.
		{"no endpoint", "          OTEL_EXPORTER_OTLP_ENDPOINT: ${{ vars.OTEL_EXPORTER_OTLP_ENDPOINT }}\n", "", "OTEL_EXPORTER_OTLP_ENDPOINT is not set"},
		{"endpoint on gRPC", "${{ vars.OTEL_EXPORTER_OTLP_ENDPOINT }}", "https://otel.example.com:4317", "is on OTLP/gRPC's port, 4317"},
		{"endpoint from an input", "${{ vars.OTEL_EXPORTER_OTLP_ENDPOINT }}", "${{ inputs.endpoint }}", "is not an http:// or https:// URL"},
		{"a per-signal endpoint in the workflow's env on gRPC", "  MALARUN_LIMIT_WAIT: 10m\n", "  MALARUN_LIMIT_WAIT: 10m\n  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: http://localhost:4317/v1/traces\n",
			"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT \"http://localhost:4317/v1/traces\" is on OTLP/gRPC's port"},
		{"grpc", "OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf", "OTEL_EXPORTER_OTLP_PROTOCOL: grpc", "OTEL_EXPORTER_OTLP_PROTOCOL \"grpc\""},
		{"headers written out", "${{ secrets.OTEL_EXPORTER_OTLP_HEADERS }}", "authorization=Bearer%20abc", "OTEL_EXPORTER_OTLP_HEADERS is written in the recipe"},
		{"headers from a variable", "${{ secrets.OTEL_EXPORTER_OTLP_HEADERS }}", "${{ vars.OTEL_EXPORTER_OTLP_HEADERS }}", "OTEL_EXPORTER_OTLP_HEADERS is from a repository variable"},
		{"a made-up parent", "          OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf\n",
			"          OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf\n          TRACEPARENT: 00-${{ github.run_id }}-01\n", "TRACEPARENT is set by the recipe"},
		{"no resource attributes", "OTEL_RESOURCE_ATTRIBUTES: ", "OTEL_RESOURCE_ATTRIBUTE: ", "OTEL_RESOURCE_ATTRIBUTES is not set"},
		{"the issue", "cicd.pipeline.name=${{ github.workflow }}", "cicd.pipeline.name=${{ matrix.issue }}", "cicd.pipeline.name=${{ matrix.issue }} carries the issue id"},
		{"the issue from the env", "cicd.pipeline.name=${{ github.workflow }}", "cicd.pipeline.name=${{ github.workflow }},malarun.issue=${{ env.ISSUE }}", "malarun.issue=${{ env.ISSUE }} carries the issue id"},
		{"the job's name", "cicd.pipeline.name=${{ github.workflow }}", "cicd.pipeline.name=${{ github.workflow }},cicd.pipeline.task.name=${{ matrix.issue }}", "carries the issue id"},
		{"the run's id", "cicd.pipeline.name=${{ github.workflow }}", "cicd.pipeline.name=${{ github.workflow }},cicd.pipeline.run.id=${{ github.run_id }}", "cicd.pipeline.run.id is not one of"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(good, tt.old) {
				t.Fatalf("malarun.yml has no %q to break", tt.old)
			}
			wf, errs := actionlint.Parse([]byte(strings.Replace(good, tt.old, tt.new, 1)))
			if wf == nil {
				t.Fatalf("%v", errs)
			}
			wantProblem(t, checkActions(wf, "2.1.332"), tt.want)
		})
	}
}
