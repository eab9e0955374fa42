package deploy_test

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/builtin"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func loadArgo(t *testing.T) *wfv1.WorkflowTemplate {
	t.Helper()
	docs := yamlDocs(t, "argo/workflowtemplate.yaml")
	if len(docs) != 1 {
		t.Fatalf("argo/workflowtemplate.yaml: %d documents, want 1", len(docs))
	}
	if k := kindOf(t, "argo", docs[0]); k != "argoproj.io/v1alpha1 WorkflowTemplate" {
		t.Fatalf("argo/workflowtemplate.yaml is a %s", k)
	}
	var wt wfv1.WorkflowTemplate
	decodeStrict(t, "argo/workflowtemplate.yaml", docs[0], &wt)
	return &wt
}

func TestArgoRecipe(t *testing.T) {
	wt := loadArgo(t)
	checkArgo(wt, loadKube(t), deploy.contract).report(t, "argo/workflowtemplate.yaml")
	rs := templateNamed(wt.Spec, "malarun").RetryStrategy
	for _, ec := range append([]exitCode{{Code: -1, Outcome: "no exit code"}}, deploy.contract...) {
		n, _ := retries(rs, ec.Code)
		wait, _ := backoffTotal(rs.Backoff, n)
		t.Logf("exit %d (%s): %d retries over %v", ec.Code, ec.Outcome, n, wait)
	}
}

// retryDecision evaluates a retryStrategy expression as Argo's controller
// does after a failed attempt: the variables of buildRetryStrategyLocalScope
// (retries, lastRetry.exitCode, .status, .duration, .message, all strings),
// nested the way expand.Expand nests dotted names, with the asInt and
// asFloat of env.GetFuncMap (argo-workflows v3.7, workflow/controller and
// util/expr/env), then expr.Compile and expr.Run as argoexpr.EvalBool.
func retryDecision(expression string, exitCode, retries int) (bool, error) {
	env := map[string]any{
		"retries": strconv.Itoa(retries),
		"lastRetry": map[string]any{
			"exitCode": strconv.Itoa(exitCode),
			"status":   string(wfv1.NodeFailed),
			"duration": "120",
			"message":  "",
		},
		"asInt":   builtin.Int,
		"asFloat": builtin.Float,
	}
	program, err := expr.Compile(expression, expr.Env(env))
	if err != nil {
		return false, err
	}
	out, err := expr.Run(program, env)
	if err != nil {
		return false, err
	}
	b, ok := out.(bool)
	if !ok {
		return false, fmt.Errorf("the expression gives %T, not a bool", out)
	}
	return b, nil
}

// retries counts the retries the strategy makes after attempts that all end
// with exitCode: the expression is asked after each, up to limit.
func retries(rs *wfv1.RetryStrategy, exitCode int) (int, error) {
	limit := math.MaxInt32
	if rs.Limit != nil {
		limit = rs.Limit.IntValue()
	}
	n := 0
	for n < limit {
		ok, err := retryDecision(rs.Expression, exitCode, n)
		if err != nil || !ok {
			return n, err
		}
		n++
	}
	return n, nil
}

// backoffTotal is the time the strategy waits in all over n retries: each
// duration × factor^i, at most cap (workflow/controller/operator.go).
func backoffTotal(b *wfv1.Backoff, n int) (time.Duration, error) {
	if b == nil {
		return 0, nil
	}
	base, err := time.ParseDuration(b.Duration)
	if err != nil {
		return 0, fmt.Errorf("backoff.duration: %v", err)
	}
	factor := 1.0
	if b.Factor != nil {
		factor = float64(b.Factor.IntValue())
	}
	var limit time.Duration
	if b.Cap != "" {
		if limit, err = time.ParseDuration(b.Cap); err != nil {
			return 0, fmt.Errorf("backoff.cap: %v", err)
		}
	}
	var total time.Duration
	for i := range n {
		d := time.Duration(float64(base) * math.Pow(factor, float64(i)))
		if limit > 0 && d > limit {
			d = limit
		}
		total += d
	}
	return total, nil
}

// checkArgo: the WorkflowTemplate fans out over issues and retries each as
// the contract says.
func checkArgo(wt *wfv1.WorkflowTemplate, kube kubeRecipe, contract []exitCode) (p problems) {
	spec := wt.Spec
	entry := templateNamed(spec, spec.Entrypoint)
	if entry == nil || len(entry.Steps) != 1 || len(entry.Steps[0].Steps) != 1 {
		p.add("the entrypoint %q is not one step fanned out over the issues", spec.Entrypoint)
		return p
	}
	step := entry.Steps[0].Steps[0]
	if !strings.Contains(string(step.WithParam), "workflow.parameters.") {
		p.add("the step does not fan out over a workflow parameter (withParam %q)", step.WithParam)
	}
	tmpl := templateNamed(spec, step.Template)
	if tmpl == nil || tmpl.Container == nil {
		p.add("the step's template %q is not a container", step.Template)
		return p
	}
	c := tmpl.Container
	if len(c.Command) != 1 || c.Command[0] != "malarun" {
		p.add("command %q: Argo's executor needs it given, as [malarun]", c.Command)
	}
	issue := "{{inputs.parameters.issue}}"
	if len(c.Args) == 0 || c.Args[0] != issue {
		p.add("the first argument %q is not the issue %s", c.Args, issue)
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		p.add("automountServiceAccountToken is not false: the agent's shell commands would hold an API token")
	}
	if !nonRoot(spec.SecurityContext, c.SecurityContext) {
		p.add("runAsNonRoot is not set")
	}
	p = append(p, checkSecret(*c)...)
	// The issue is the step's parameter, from the workflow's item; Argo's
	// pods carry the workflow's name as a label.
	p = append(p, checkKubeOTel(*c, kube.configMaps, []string{"inputs.parameters.issue", "{{item"},
		[]string{labelField("workflows.argoproj.io/workflow")})...)

	p = append(p, checkArgoRetries(tmpl.RetryStrategy, contract)...)

	// The configuration is deploy/kubernetes's config map.
	var cfg malarunConfig
	if text, _, err := kubeConfig(kube); err != nil {
		p.add("%v", err)
	} else if cfg, err = parseConfig(text); err != nil {
		p.add("%v", err)
	}
	if m, ok := argoMount(*c, flagValue(c.Args, "--config")); !ok || argoVolume(spec, m.Name).ConfigMap == nil ||
		kube.configMaps[argoVolume(spec, m.Name).ConfigMap.Name] == nil {
		p.add("--config is not on a config map of deploy/kubernetes")
	}
	var patch corev1.PodSpec
	if err := unmarshalStrict([]byte(tmpl.PodSpecPatch), &patch); err != nil {
		p.add("podSpecPatch: %v", err)
	}
	if grace, err := cfg.duration("shutdown_grace"); err != nil {
		p.add("%v", err)
	} else if tg := patch.TerminationGracePeriodSeconds; tg == nil || time.Duration(*tg)*time.Second < grace+15*time.Second {
		p.add("terminationGracePeriodSeconds (podSpecPatch) %v < shutdown_grace %v + 15s", deref(tg), grace)
	}
	home := ""
	for _, e := range c.Env {
		if e.Name == "HOME" {
			home = e.Value
		}
	}
	for _, w := range []struct{ what, path string }{
		{"the working tree (cwd)", cfg["cwd"]},
		{"the CLI's session files (~/.claude)", home + "/.claude"},
		{"state_dir", cfg["state_dir"]},
	} {
		m, ok := argoMount(*c, w.path)
		if !ok || argoVolume(spec, m.Name).PersistentVolumeClaim == nil {
			p.add("%s (%s) is not on a persistent volume claim", w.what, w.path)
		} else if w.what != "state_dir" && !strings.Contains(m.SubPath, issue) {
			p.add("%s (%s) is not per issue: subPath %q", w.what, w.path, m.SubPath)
		}
	}
	return p
}

// checkArgoRetries evaluates the expression for every code of the contract
// (and -1, a pod that vanished without one): never retried when the
// contract says a retry cannot help; a few times for "now"; for a usage
// limit, retries spread over an hour or more.
func checkArgoRetries(rs *wfv1.RetryStrategy, contract []exitCode) (p problems) {
	if rs == nil || rs.Expression == "" {
		p.add("no retryStrategy expression")
		return p
	}
	if rs.RetryPolicy != wfv1.RetryPolicyAlways {
		p.add("retryPolicy %q: with Always the expression also sees pods that ended in Error (deleted, evicted)", rs.RetryPolicy)
	}
	codes := append([]exitCode{{Code: -1, Outcome: "no exit code", Retry: retryNow}}, contract...)
	for _, ec := range codes {
		if ec.Code == 0 {
			continue
		}
		n, err := retries(rs, ec.Code)
		if err != nil {
			p.add("exit %d: %v", ec.Code, err)
			continue
		}
		wait, err := backoffTotal(rs.Backoff, n)
		if err != nil {
			p.add("%v", err)
			continue
		}
		switch ec.Retry {
		case retryNever:
			if n > 0 {
				p.add("exit %d (%s) is retried %d times; the contract says a retry cannot help", ec.Code, ec.Outcome, n)
			}
		case retryNow:
			if n < 1 || n > 5 {
				p.add("exit %d (%s) is retried %d times, want a few (1 to 5): the next attempt resumes", ec.Code, ec.Outcome, n)
			}
		case retryAfterRetryAt:
			if n < 3 || wait < time.Hour {
				p.add("exit %d (%s) is retried %d times over %v, want a long backoff (an hour or more)", ec.Code, ec.Outcome, n, wait)
			}
		default:
			p.add("exit %d: unknown retry %q in the contract", ec.Code, ec.Retry)
		}
	}
	return p
}

func templateNamed(spec wfv1.WorkflowSpec, name string) *wfv1.Template {
	for i := range spec.Templates {
		if spec.Templates[i].Name == name {
			return &spec.Templates[i]
		}
	}
	return nil
}

func argoMount(c corev1.Container, path string) (corev1.VolumeMount, bool) {
	return mountOf(c, path)
}

func argoVolume(spec wfv1.WorkflowSpec, name string) corev1.Volume {
	for _, v := range spec.Volumes {
		if v.Name == name {
			return v
		}
	}
	return corev1.Volume{}
}

// TestArgoExpressionIsArgos: the evaluation follows Argo's variables. They
// are strings in an untyped map, so, as in Argo, comparing exitCode with a
// number or naming a variable that does not exist compiles and is false:
// only the retry counts checkArgoRetries derives reveal such a mistake.
func TestArgoExpressionIsArgos(t *testing.T) {
	tests := []struct {
		expression string
		code, n    int
		want       bool
		wantErr    bool
	}{
		{"asInt(lastRetry.exitCode) == 75", 75, 0, true, false},
		{"asInt(lastRetry.exitCode) == 75", 3, 0, false, false},
		{"lastRetry.exitCode == '75'", 75, 0, true, false},
		{"asInt(retries) < 2", 3, 2, false, false},
		{`lastRetry.status == "Failed"`, 3, 0, true, false},
		{"lastRetry.exitCode == 75", 75, 0, false, false},
		{"lastRetry.code == 75", 75, 0, false, false},
		{"asInt(lastRetry.exitCode)", 75, 0, false, true},
		{"asInt(lastRetry.exitCode) ==", 75, 0, false, true},
	}
	for _, tt := range tests {
		got, err := retryDecision(tt.expression, tt.code, tt.n)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("%s with exit %d, retries %d: %v, %v; want %v, error %v", tt.expression, tt.code, tt.n, got, err, tt.want, tt.wantErr)
		}
	}
}

// TestArgoChecksCatch: the retry checks fail on strategies that break the
// contract.
func TestArgoChecksCatch(t *testing.T) {
	ten := intstr.FromString("10")
	two := intstr.FromString("2")
	backoff := &wfv1.Backoff{Duration: "1m", Factor: &two, Cap: "1h"}
	tests := []struct {
		name string
		rs   *wfv1.RetryStrategy
		want string
	}{
		{"none", nil, "no retryStrategy expression"},
		{"everything retried", &wfv1.RetryStrategy{Limit: &ten, RetryPolicy: wfv1.RetryPolicyAlways, Backoff: backoff, Expression: "true"},
			"exit 4 (not_safe_to_retry) is retried 10 times"},
		{"retries exhausted retried without end", &wfv1.RetryStrategy{Limit: &ten, RetryPolicy: wfv1.RetryPolicyAlways, Backoff: backoff,
			Expression: "asInt(lastRetry.exitCode) in [3, 75, 124, 130, 143, -1]"}, "exit 3 (retries_exhausted) is retried 10 times, want a few"},
		{"usage limit not retried", &wfv1.RetryStrategy{Limit: &ten, RetryPolicy: wfv1.RetryPolicyAlways, Backoff: backoff,
			Expression: "asInt(lastRetry.exitCode) in [3, 124, 130, 143, -1] && asInt(retries) < 3"}, "exit 75 (rate_limit) is retried 0 times"},
		{"usage limit retried at once", &wfv1.RetryStrategy{Limit: &ten, RetryPolicy: wfv1.RetryPolicyAlways, Backoff: &wfv1.Backoff{Duration: "10s"},
			Expression: "asInt(lastRetry.exitCode) == 75"}, "exit 75 (rate_limit) is retried 10 times over 1m40s"},
		{"session timeout not retried", &wfv1.RetryStrategy{Limit: &ten, RetryPolicy: wfv1.RetryPolicyAlways, Backoff: backoff,
			Expression: "asInt(lastRetry.exitCode) in [3, 75]"}, "exit 124 (session_timeout) is retried 0 times"},
		{"failed only", &wfv1.RetryStrategy{Limit: &ten, Backoff: backoff, Expression: "asInt(lastRetry.exitCode) == 75"}, "retryPolicy"},
		{"a number compared with Argo's string", &wfv1.RetryStrategy{Limit: &ten, RetryPolicy: wfv1.RetryPolicyAlways, Backoff: backoff,
			Expression: "lastRetry.exitCode == 75"}, "exit 75 (rate_limit) is retried 0 times"},
		{"not an expression", &wfv1.RetryStrategy{Limit: &ten, RetryPolicy: wfv1.RetryPolicyAlways, Expression: "asInt(lastRetry.exitCode) =="},
			"exit -1: unexpected token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantProblem(t, checkArgoRetries(tt.rs, deploy.contract), tt.want)
		})
	}
	wt := loadArgo(t)
	wt.Spec.Templates[1].PodSpecPatch = `{"terminationGracePeriodSeconds": 10}`
	wantProblem(t, checkArgo(wt, loadKube(t), deploy.contract), "terminationGracePeriodSeconds (podSpecPatch) 10")
	wt = loadArgo(t)
	wt.Spec.Templates[1].Container.VolumeMounts[1].SubPath = "claude"
	wantProblem(t, checkArgo(wt, loadKube(t), deploy.contract), "(~/.claude) (/home/malarun/.claude) is not per issue")

	// Telemetry: the breaks every recipe's container is checked against,
	// then the issue put into the resource attributes the ways Argo can.
	for _, b := range otelBreaks {
		t.Run("telemetry: "+b.name, func(t *testing.T) {
			wt, kube := loadArgo(t), loadKube(t)
			b.mutate(templateNamed(wt.Spec, "malarun").Container, kube.configMaps)
			wantProblem(t, checkArgo(wt, kube, deploy.contract), b.want)
		})
	}
	for _, tt := range []struct{ name, attr, want string }{
		{"the issue", "malarun.issue={{inputs.parameters.issue}}", "resource attribute malarun.issue={{inputs.parameters.issue}} carries the issue id"},
		{"the issue in a standard key", "k8s.pod.name={{inputs.parameters.issue}}", "resource attribute k8s.pod.name={{inputs.parameters.issue}} carries the issue id"},
		{"the item", "k8s.job.name={{item}}", "carries the issue id"},
		{"a variable holding the issue", "k8s.pod.name=$(ISSUE)", "resource attribute k8s.pod.name=$(ISSUE) carries the issue id"},
		{"a variable built from it", "k8s.pod.name=$(BRANCH)", "resource attribute k8s.pod.name=$(BRANCH) carries the issue id"},
	} {
		t.Run("telemetry: "+tt.name, func(t *testing.T) {
			wt := loadArgo(t)
			c := templateNamed(wt.Spec, "malarun").Container
			c.Env = slices.Insert(c.Env, 0, corev1.EnvVar{Name: "ISSUE", Value: "{{inputs.parameters.issue}}"},
				corev1.EnvVar{Name: "BRANCH", Value: "malarun/$(ISSUE)"})
			appendAttr(c, tt.attr)
			wantProblem(t, checkArgo(wt, loadKube(t), deploy.contract), tt.want)
		})
	}
}
