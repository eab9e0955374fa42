package deploy_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// indexAnnotation is where a pod of an Indexed Job finds its index.
const indexAnnotation = "metadata.annotations['batch.kubernetes.io/job-completion-index']"

// kubeRecipe is deploy/kubernetes, every document decoded into its type.
type kubeRecipe struct {
	job        *batchv1.Job
	configMaps map[string]*corev1.ConfigMap
	pvcs       map[string]*corev1.PersistentVolumeClaim
}

func loadKube(t *testing.T) kubeRecipe {
	t.Helper()
	files, err := filepath.Glob("kubernetes/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in kubernetes/: %v", err)
	}
	r := kubeRecipe{configMaps: map[string]*corev1.ConfigMap{}, pvcs: map[string]*corev1.PersistentVolumeClaim{}}
	for _, f := range files {
		for i, doc := range yamlDocs(t, f) {
			name := f + " #" + strconv.Itoa(i+1)
			switch kind := kindOf(t, name, doc); kind {
			case "batch/v1 Job":
				if r.job != nil {
					t.Fatalf("%s: a second Job", name)
				}
				r.job = &batchv1.Job{}
				decodeStrict(t, name, doc, r.job)
			case "v1 ConfigMap":
				cm := &corev1.ConfigMap{}
				decodeStrict(t, name, doc, cm)
				r.configMaps[cm.Name] = cm
			case "v1 PersistentVolumeClaim":
				pvc := &corev1.PersistentVolumeClaim{}
				decodeStrict(t, name, doc, pvc)
				r.pvcs[pvc.Name] = pvc
			default:
				t.Fatalf("%s: %q: no type to check it against", name, kind)
			}
		}
	}
	if r.job == nil {
		t.Fatal("kubernetes/ has no Job")
	}
	return r
}

func TestKubernetesRecipe(t *testing.T) {
	r := loadKube(t)
	checkKube(r, deploy.contract).report(t, "kubernetes/job.yaml")
	cfg, _, err := kubeConfig(r)
	if err != nil {
		t.Fatal(err)
	}
	validateConfig(t, cfg, nil)
}

// checkKube checks what strict decoding cannot: the Job acts on every exit
// code as the contract says, and a retried pod finds the issue's work.
func checkKube(r kubeRecipe, contract []exitCode) (p problems) {
	spec := r.job.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		p.add("completionMode is not Indexed: an index per issue is what gives each pod its issue")
	}
	pod := spec.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever {
		p.add("restartPolicy %q: podFailurePolicy needs Never", pod.RestartPolicy)
	}
	if len(pod.Containers) != 1 {
		p.add("%d containers, want one: malarun", len(pod.Containers))
		return p
	}
	c := pod.Containers[0]
	p = append(p, checkFailurePolicy(spec, c.Name, contract)...)
	if len(c.Command) > 0 {
		p.add("command %q replaces the image's ENTRYPOINT: malarun would not be PID 1", c.Command)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		p.add("automountServiceAccountToken is not false: the agent's shell commands would hold an API token")
	}
	if !nonRoot(pod.SecurityContext, c.SecurityContext) {
		p.add("runAsNonRoot is not set")
	}
	p = append(p, checkSecret(c)...)
	p = append(p, checkKubeOTel(c, r.configMaps, nil, jobPodFields(spec.Template))...)

	vars := perIssueVars(c)
	if len(c.Args) == 0 || !mentions(c.Args[0], vars) {
		p.add("the issue id (first argument) %q does not come from the completion index (variables %q)", c.Args, vars)
	}
	text, cfgMap, err := kubeConfig(r)
	if err != nil {
		p.add("%v", err)
		return p
	}
	cfg, err := parseConfig(text)
	if err != nil {
		p.add("config map %s: %v", cfgMap, err)
		return p
	}
	if d, err := cfg.duration("limit_wait"); err != nil || d <= 0 || cfg["limit_wait"] == "" {
		p.add("limit_wait is not set (%v): a pod would exit 75 at the first usage limit instead of waiting it out", err)
	}
	if grace, err := cfg.duration("shutdown_grace"); err != nil {
		p.add("%v", err)
	} else if tg := pod.TerminationGracePeriodSeconds; tg == nil || time.Duration(*tg)*time.Second < grace+15*time.Second {
		p.add("terminationGracePeriodSeconds %v < shutdown_grace %v + 15s: the kubelet would kill malarun before it recorded the run", deref(tg), grace)
	}

	// The issue's work must outlive the pod, and each issue has its own.
	home := envValue(c, "HOME")
	if home == "" {
		p.add("HOME is not set: the record keeps it, every pod of an issue needs the same")
	}
	for _, w := range []struct{ what, path string }{
		{"the working tree (cwd)", cfg["cwd"]},
		{"the CLI's session files (~/.claude)", filepath.Join(home, ".claude")},
	} {
		if w.path == "" || w.path == ".claude" {
			p.add("%s: no path set", w.what)
			continue
		}
		m, claim, ok := volumeOf(r, pod, c, w.path)
		if !ok || claim == "" {
			p.add("%s (%s) is not on a persistent volume claim", w.what, w.path)
			continue
		}
		if !mentions(m.SubPathExpr, vars) {
			p.add("%s (%s) is not per issue: subPathExpr %q does not use %q", w.what, w.path, m.SubPathExpr, vars)
		}
	}
	if _, claim, ok := volumeOf(r, pod, c, cfg["state_dir"]); cfg["state_dir"] == "" || !ok || claim == "" {
		p.add("state_dir %q is not on a persistent volume claim", cfg["state_dir"])
	}

	p = append(p, checkPrompts(r, pod, c)...)
	return p
}

// checkFailurePolicy: a rule for every non-zero code of the contract, the
// first that matches it being Count for a code a retry helps and FailIndex
// for the others; Ignore only for a disrupted pod.
func checkFailurePolicy(spec batchv1.JobSpec, container string, contract []exitCode) (p problems) {
	pfp := spec.PodFailurePolicy
	if pfp == nil {
		p.add("no podFailurePolicy")
		return p
	}
	if spec.BackoffLimitPerIndex == nil || *spec.BackoffLimitPerIndex < 1 {
		p.add("no backoffLimitPerIndex: FailIndex needs it, and one issue's retries would use up the others'")
	}
	if rp := spec.PodReplacementPolicy; rp != nil && *rp != batchv1.Failed {
		p.add("podReplacementPolicy %q: a new pod could start while the old one still holds the issue", *rp)
	}
	for i, rule := range pfp.Rules {
		switch rule.Action {
		case batchv1.PodFailurePolicyActionIgnore:
			if rule.OnExitCodes != nil {
				p.add("rule %d ignores exit codes %v: an ignored failure is not counted, so one that repeats is retried forever", i+1, rule.OnExitCodes.Values)
			}
			if len(rule.OnPodConditions) != 1 || rule.OnPodConditions[0].Type != corev1.DisruptionTarget {
				p.add("rule %d ignores %v: only a disrupted pod (DisruptionTarget) may go uncounted", i+1, rule.OnPodConditions)
			} else if i != 0 {
				p.add("rule %d ignores DisruptionTarget but is not the first: a disrupted pod's exit 143 would match an earlier rule", i+1)
			}
		case batchv1.PodFailurePolicyActionFailJob:
			p.add("rule %d fails the whole Job: one issue's exit would end every other issue", i+1)
		}
		if e := rule.OnExitCodes; e != nil {
			if e.ContainerName == nil || *e.ContainerName != container {
				p.add("rule %d: containerName %v, want %q (without it, init containers' exit codes match too)", i+1, deref(e.ContainerName), container)
			}
			if e.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && slices.Contains(e.Values, 0) {
				p.add("rule %d: 0 in an In rule (the API refuses it)", i+1)
			}
		}
	}
	if len(pfp.Rules) == 0 || pfp.Rules[0].Action != batchv1.PodFailurePolicyActionIgnore {
		p.add("the first rule does not Ignore DisruptionTarget: a preempted or evicted pod would be counted")
	}
	for _, ec := range contract {
		if ec.Code == 0 {
			continue
		}
		want := batchv1.PodFailurePolicyActionFailIndex
		if ec.Retry != retryNever {
			want = batchv1.PodFailurePolicyActionCount
		}
		rule, ok := firstExitRule(pfp.Rules, container, int32(ec.Code))
		switch {
		case !ok:
			p.add("exit %d (%s) has no rule; want %s", ec.Code, ec.Outcome, want)
		case rule.Action != want:
			p.add("exit %d (%s, retry %s) gets %s, want %s", ec.Code, ec.Outcome, ec.Retry, rule.Action, want)
		}
	}
	return p
}

// firstExitRule is the rule the Job controller applies to a pod whose
// container exited with code: the first whose onExitCodes match.
func firstExitRule(rules []batchv1.PodFailurePolicyRule, container string, code int32) (batchv1.PodFailurePolicyRule, bool) {
	for _, r := range rules {
		e := r.OnExitCodes
		if e == nil || e.ContainerName != nil && *e.ContainerName != container {
			continue
		}
		in := slices.Contains(e.Values, code)
		if e.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && in || e.Operator == batchv1.PodFailurePolicyOnExitCodesOpNotIn && !in {
			return r, true
		}
	}
	return batchv1.PodFailurePolicyRule{}, false
}

// kubeConfig is the malarun.yaml the container reads (--config), from the
// config map mounted there.
func kubeConfig(r kubeRecipe) (text, configMap string, err error) {
	pod := r.job.Spec.Template.Spec
	c := pod.Containers[0]
	path := flagValue(c.Args, "--config")
	if path == "" {
		return "", "", fmt.Errorf("malarun gets no --config")
	}
	cm, key, ok := configMapFile(r, pod, c, path)
	if !ok {
		return "", "", fmt.Errorf("--config %s is not a key of a config map in kubernetes/", path)
	}
	return r.configMaps[cm].Data[key], cm, nil
}

// checkPrompts: each index's --prompt is a key of the prompts config map.
func checkPrompts(r kubeRecipe, pod corev1.PodSpec, c corev1.Container) (p problems) {
	prompt := flagValue(c.Args, "--prompt")
	completions := int32(0)
	if r.job.Spec.Completions != nil {
		completions = *r.job.Spec.Completions
	}
	if completions < 1 {
		p.add("completions is not set: one index per issue")
	}
	for i := range completions {
		path := expandEnv(prompt, envFor(c, int(i)))
		if _, _, ok := configMapFile(r, pod, c, path); !ok {
			p.add("index %d: its prompt %s is not a key of a config map in kubernetes/", i, path)
		}
	}
	return p
}

// configMapFile finds which key of which config map of the recipe is the
// file at path in container c.
func configMapFile(r kubeRecipe, pod corev1.PodSpec, c corev1.Container, path string) (cm, key string, ok bool) {
	m, found := mountOf(c, path)
	if !found {
		return "", "", false
	}
	v, found := volumeNamed(pod, m.Name)
	if !found || v.ConfigMap == nil {
		return "", "", false
	}
	rel, _ := filepath.Rel(m.MountPath, path)
	key = rel
	if len(v.ConfigMap.Items) > 0 {
		key = ""
		for _, it := range v.ConfigMap.Items {
			if it.Path == rel {
				key = it.Key
			}
		}
	}
	cmap, found := r.configMaps[v.ConfigMap.Name]
	if !found {
		return "", "", false
	}
	_, ok = cmap.Data[key]
	return cmap.Name, key, ok
}

// volumeOf finds the mount that holds path and, when its volume is a claim
// the recipe defines as ReadWriteMany, the claim.
func volumeOf(r kubeRecipe, pod corev1.PodSpec, c corev1.Container, path string) (corev1.VolumeMount, string, bool) {
	m, ok := mountOf(c, path)
	if !ok {
		return m, "", false
	}
	v, ok := volumeNamed(pod, m.Name)
	if !ok || v.PersistentVolumeClaim == nil {
		return m, "", true
	}
	pvc, ok := r.pvcs[v.PersistentVolumeClaim.ClaimName]
	if !ok || !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteMany) {
		return m, "", true
	}
	return m, pvc.Name, true
}

// mountOf is the container's mount that holds path (the deepest one).
func mountOf(c corev1.Container, path string) (corev1.VolumeMount, bool) {
	var best corev1.VolumeMount
	found := false
	for _, m := range c.VolumeMounts {
		if under(path, m.MountPath) && (!found || len(m.MountPath) > len(best.MountPath)) {
			best, found = m, true
		}
	}
	return best, found
}

func volumeNamed(pod corev1.PodSpec, name string) (corev1.Volume, bool) {
	for _, v := range pod.Volumes {
		if v.Name == name {
			return v, true
		}
	}
	return corev1.Volume{}, false
}

// perIssueVars are the container's variables that differ per issue: those
// holding the completion index (its annotation, or its label), and those
// built from them.
func perIssueVars(c corev1.Container) []string {
	vars := []string{"JOB_COMPLETION_INDEX"}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && strings.Contains(e.ValueFrom.FieldRef.FieldPath, "job-completion-index") ||
			e.Value != "" && mentions(e.Value, vars) {
			vars = append(vars, e.Name)
		}
	}
	return vars
}

// mentions reports whether s refers to one of vars as $(VAR).
func mentions(s string, vars []string) bool {
	return slices.ContainsFunc(vars, func(v string) bool { return strings.Contains(s, "$("+v+")") })
}

// envFor is the container's environment in the pod of index i.
func envFor(c corev1.Container, i int) map[string]string {
	env := map[string]string{"JOB_COMPLETION_INDEX": strconv.Itoa(i)}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == indexAnnotation:
			env[e.Name] = strconv.Itoa(i)
		case e.ValueFrom == nil:
			env[e.Name] = expandEnv(e.Value, env)
		}
	}
	return env
}

// expandEnv does what the kubelet does to $(VAR) in args and values.
func expandEnv(s string, env map[string]string) string {
	return regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`).ReplaceAllStringFunc(s, func(ref string) string {
		if v, ok := env[ref[2:len(ref)-1]]; ok {
			return v
		}
		return ref
	})
}

func envValue(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name && e.ValueFrom == nil {
			return e.Value
		}
	}
	return ""
}

// checkSecret: the API key comes from a Secret, and no key is written out.
func checkSecret(c corev1.Container) (p problems) {
	fromSecret := false
	for _, e := range c.Env {
		if strings.Contains(e.Value, "sk-ant-") {
			p.add("env %s holds an API key in the manifest", e.Name)
		}
		if e.Name == "ANTHROPIC_API_KEY" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			fromSecret = true
		}
	}
	if !fromSecret {
		p.add("ANTHROPIC_API_KEY does not come from a Secret")
	}
	return p
}

func nonRoot(pod *corev1.PodSecurityContext, c *corev1.SecurityContext) bool {
	if c != nil && c.RunAsNonRoot != nil {
		return *c.RunAsNonRoot
	}
	return pod != nil && pod.RunAsNonRoot != nil && *pod.RunAsNonRoot
}

// flagValue is the argument after flag in args.
func flagValue(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

func deref[T any](p *T) any {
	if p == nil {
		return "unset"
	}
	return *p
}

// TestKubernetesChecksCatch: each check fails on a recipe broken the way it
// guards against.
func TestKubernetesChecksCatch(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(r *kubeRecipe)
		want   string
	}{
		{"not indexed", func(r *kubeRecipe) { r.job.Spec.CompletionMode = nil }, "not Indexed"},
		{"restart on failure", func(r *kubeRecipe) { r.job.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure }, "needs Never"},
		{"no per-index limit", func(r *kubeRecipe) { r.job.Spec.BackoffLimitPerIndex = nil }, "no backoffLimitPerIndex"},
		{"a code left out", func(r *kubeRecipe) {
			rules := r.job.Spec.PodFailurePolicy.Rules
			rules[1].OnExitCodes.Values = slices.DeleteFunc(slices.Clone(rules[1].OnExitCodes.Values), func(v int32) bool { return v == 8 })
		}, "exit 8 (auth) has no rule"},
		{"a code a retry cannot fix counted", func(r *kubeRecipe) {
			rules := r.job.Spec.PodFailurePolicy.Rules
			rules[2].OnExitCodes.Values = append(slices.Clone(rules[2].OnExitCodes.Values), 4)
			rules[1], rules[2] = rules[2], rules[1]
		}, "exit 4 (not_safe_to_retry, retry never) gets Count, want FailIndex"},
		{"usage limit failed", func(r *kubeRecipe) {
			rules := r.job.Spec.PodFailurePolicy.Rules
			rules[1].OnExitCodes.Values = append(slices.Clone(rules[1].OnExitCodes.Values), 75)
		}, "exit 75 (rate_limit, retry after_retry_at) gets FailIndex, want Count"},
		{"an exit code ignored", func(r *kubeRecipe) {
			r.job.Spec.PodFailurePolicy.Rules[2].Action = batchv1.PodFailurePolicyActionIgnore
		}, "ignores exit codes"},
		{"no container name", func(r *kubeRecipe) { r.job.Spec.PodFailurePolicy.Rules[1].OnExitCodes.ContainerName = nil }, "containerName unset"},
		{"disruption not first", func(r *kubeRecipe) {
			rules := r.job.Spec.PodFailurePolicy.Rules
			r.job.Spec.PodFailurePolicy.Rules = append(slices.Clone(rules[1:]), rules[0])
		}, "is not the first"},
		{"command set", func(r *kubeRecipe) { r.job.Spec.Template.Spec.Containers[0].Command = []string{"sh", "-c", "malarun"} }, "ENTRYPOINT"},
		{"token mounted", func(r *kubeRecipe) { r.job.Spec.Template.Spec.AutomountServiceAccountToken = nil }, "automountServiceAccountToken"},
		{"root", func(r *kubeRecipe) { r.job.Spec.Template.Spec.SecurityContext.RunAsNonRoot = nil }, "runAsNonRoot"},
		{"key in the manifest", func(r *kubeRecipe) {
			c := &r.job.Spec.Template.Spec.Containers[0]
			for i := range c.Env {
				if c.Env[i].Name == "ANTHROPIC_API_KEY" {
					c.Env[i] = corev1.EnvVar{Name: "ANTHROPIC_API_KEY", Value: "sk-ant-api03-xyz"}
				}
			}
		}, "holds an API key"},
		{"short grace", func(r *kubeRecipe) { g := int64(20); r.job.Spec.Template.Spec.TerminationGracePeriodSeconds = &g }, "terminationGracePeriodSeconds 20"},
		{"no limit_wait", func(r *kubeRecipe) { setConfig(r, "limit_wait: 5h\n", "") }, "limit_wait is not set"},
		{"longer shutdown_grace", func(r *kubeRecipe) { setConfig(r, "shutdown_grace: 15s", "shutdown_grace: 1m") }, "< shutdown_grace 1m0s + 15s"},
		{"work tree shared by all issues", func(r *kubeRecipe) {
			c := &r.job.Spec.Template.Spec.Containers[0]
			for i := range c.VolumeMounts {
				if c.VolumeMounts[i].MountPath == "/work" {
					c.VolumeMounts[i].SubPathExpr, c.VolumeMounts[i].SubPath = "", "work"
				}
			}
		}, "the working tree (cwd) (/work) is not per issue"},
		{"sessions on the pod's disk", func(r *kubeRecipe) {
			c := &r.job.Spec.Template.Spec.Containers[0]
			c.VolumeMounts = slices.DeleteFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return strings.HasSuffix(m.MountPath, "/.claude") })
		}, "~/.claude) (/home/malarun/.claude) is not on a persistent volume claim"},
		{"a volume one node can mount", func(r *kubeRecipe) {
			for _, pvc := range r.pvcs {
				pvc.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
			}
		}, "state_dir \"/state\" is not on a persistent volume claim"},
		{"issue not from the index", func(r *kubeRecipe) { r.job.Spec.Template.Spec.Containers[0].Args[0] = "issue" }, "does not come from the completion index"},
		{"more indexes than prompts", func(r *kubeRecipe) { n := int32(4); r.job.Spec.Completions = &n }, "index 3: its prompt /etc/malarun/prompts/3.md"},
		{"config from nowhere", func(r *kubeRecipe) {
			c := &r.job.Spec.Template.Spec.Containers[0]
			c.Args[slices.Index(c.Args, "--config")+1] = "/etc/malarun/config/other.yaml"
		}, "--config /etc/malarun/config/other.yaml is not a key"},
	}
	// Telemetry: the breaks every recipe's container is checked against,
	// then the issue put into the resource attributes the ways a Job can.
	for _, b := range otelBreaks {
		tests = append(tests, struct {
			name   string
			mutate func(r *kubeRecipe)
			want   string
		}{"telemetry: " + b.name, func(r *kubeRecipe) { b.mutate(&r.job.Spec.Template.Spec.Containers[0], r.configMaps) }, b.want})
	}
	for _, tt := range []struct{ name, attr, want string }{
		{"the issue", "malarun.issue=$(ISSUE)", "resource attribute malarun.issue=$(ISSUE) carries the issue id"},
		{"the issue in a standard key", "k8s.pod.name=issue-$(INDEX)", "resource attribute k8s.pod.name=issue-$(INDEX) carries the issue id"},
		{"the completion index", "k8s.job.name=$(JOB_COMPLETION_INDEX)", "carries the issue id"},
		{"the index's label", "k8s.pod.uid=$(K8S_INDEX)", "resource attribute k8s.pod.uid=$(K8S_INDEX) carries the issue id"},
	} {
		tests = append(tests, struct {
			name   string
			mutate func(r *kubeRecipe)
			want   string
		}{"telemetry: " + tt.name, func(r *kubeRecipe) {
			c := &r.job.Spec.Template.Spec.Containers[0]
			c.Env = slices.Insert(c.Env, 0, corev1.EnvVar{Name: "K8S_INDEX", ValueFrom: &corev1.EnvVarSource{
				FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['batch.kubernetes.io/job-completion-index']"}}})
			appendAttr(c, tt.attr)
		}, tt.want})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := loadKube(t)
			tt.mutate(&r)
			wantProblem(t, checkKube(r, deploy.contract), tt.want)
		})
	}
}

// setConfig replaces old with new in the recipe's malarun.yaml.
func setConfig(r *kubeRecipe, old, new string) {
	for _, cm := range r.configMaps {
		if text, ok := cm.Data["malarun.yaml"]; ok {
			cm.Data["malarun.yaml"] = strings.Replace(text, old, new, 1)
		}
	}
}

// TestStrictDecoding: a misspelt field, in any case, or a field given twice
// is an error, not a default.
func TestStrictDecoding(t *testing.T) {
	b, err := os.ReadFile("kubernetes/job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var job batchv1.Job
	if err := unmarshalStrict(b, &job); err != nil {
		t.Fatalf("the recipe itself: %v", err)
	}
	for _, typo := range [][2]string{
		{"subPathExpr:", "subpathExpr:"},
		{"containerName:", "containername:"},
		{"backoffLimitPerIndex:", "backoffLimitPerIndx:"},
		{"podFailurePolicy:", "PodFailurePolicy:"},
		{"restartPolicy: Never", "restartPolicy: Never\n      restartPolicy: Never"},
	} {
		broken := strings.Replace(string(b), typo[0], typo[1], 1)
		if err := unmarshalStrict([]byte(broken), &batchv1.Job{}); err == nil {
			t.Errorf("%s decodes without an error", strings.TrimSpace(typo[1]))
		}
	}
}
