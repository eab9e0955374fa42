package deploy_test

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/rhysd/actionlint"
	corev1 "k8s.io/api/core/v1"
)

// Where a recipe takes one of malarun's telemetry variables from, when the
// value is not written in the recipe itself.
const (
	fromConfigMap = "a ConfigMap key"
	fromSecret    = "a Secret key"
	fromVars      = "a repository variable"
	fromSecrets   = "a repository secret"
)

// otelVar is one variable of malarun's environment that its telemetry
// reads (docs/telemetry.md), as a recipe gives it.
type otelVar struct {
	// value is the text written in the recipe or, for a ConfigMap key of the
	// recipe, that key's value.
	value string
	// from is where the value comes from: "" when it is written in the
	// recipe, else one of the from* constants or what else gives it.
	from string
	// ref names the ConfigMap or Secret key (name/key), for messages.
	ref string
	// optional: a missing ConfigMap or Secret key leaves the variable unset
	// instead of stopping the pod.
	optional bool
	// missing: the ConfigMap key is not in the recipe.
	missing bool
}

// otelEnv is what a recipe gives malarun's telemetry.
type otelEnv struct {
	vars map[string]otelVar
	// carriesIssue reports whether a value written in the recipe names the
	// issue (or what it is made from: the completion index, the matrix).
	carriesIssue func(string) bool
}

// resourceKeys are the semantic conventions' resource attributes a recipe
// may set: where a run ran, each with few values (k8s.pod.name: one per
// pod, no more than service.instance.id, which malarun makes per
// invocation). Not the issue: it is the run span's malarun.issue, and
// malarun keeps it off metrics (docs/telemetry.md), where it would make
// series per issue. Not a run's id either (cicd.pipeline.run.id): the
// conventions make that resource opt-in for metrics, for the same reason.
var resourceKeys = []string{
	"service.namespace", "deployment.environment.name",
	"k8s.cluster.name", "k8s.namespace.name", "k8s.node.name", "k8s.job.name", "k8s.pod.name", "k8s.pod.uid", "k8s.container.name",
	"cicd.pipeline.name", "vcs.repository.url.full", "vcs.repository.name",
}

// The variables of each kind: the general one, then the per-signal ones
// (which win over it).
func otlpVars(suffix string) []string {
	return []string{"OTEL_EXPORTER_OTLP_" + suffix, "OTEL_EXPORTER_OTLP_TRACES_" + suffix, "OTEL_EXPORTER_OTLP_METRICS_" + suffix}
}

// checkOTel: the recipe shows where telemetry goes, and what it shows
// works with malarun, which exports OTLP over HTTP (protobuf) only;
// headers, which may hold a key, come from a Secret; the resource
// attributes name the workload, never the issue.
func checkOTel(env otelEnv) (p problems) {
	if _, ok := env.vars["OTEL_EXPORTER_OTLP_ENDPOINT"]; !ok {
		p.add("OTEL_EXPORTER_OTLP_ENDPOINT is not set: the recipe does not show where telemetry goes")
	}
	for i, name := range otlpVars("ENDPOINT") {
		v, ok := env.vars[name]
		if !ok {
			continue
		}
		switch v.from {
		case "":
			if err := otlpHTTPURL(v.value, i == 0); err != nil {
				p.add("%s %q %v", name, v.value, err)
			}
		case fromConfigMap:
			switch {
			case !v.optional:
				p.add("%s: the ConfigMap key %s is not optional: a cluster without a collector could not leave it out (the pod would not start)", name, v.ref)
			case v.missing:
				p.add("%s: the ConfigMap key %s is not in the recipe: show the endpoint there", name, v.ref)
			default:
				if err := otlpHTTPURL(v.value, i == 0); err != nil {
					p.add("%s (ConfigMap key %s) %q %v", name, v.ref, v.value, err)
				}
			}
		case fromSecret:
			if !v.optional {
				p.add("%s: the Secret key %s is not optional: a cluster without a collector could not leave it out", name, v.ref)
			}
		case fromVars, fromSecrets:
			// Unset, it is empty: no telemetry.
		default:
			p.add("%s comes from %s: want a URL, an optional ConfigMap or Secret key, or a repository variable or secret", name, v.from)
		}
	}
	for _, name := range otlpVars("PROTOCOL") {
		v, ok := env.vars[name]
		switch {
		case !ok:
		case v.from != "":
			p.add("%s comes from %s: write http/protobuf, the only protocol malarun has", name, v.from)
		case v.value != "http/protobuf":
			p.add("%s %q: malarun exports http/protobuf only (grpc and http/json are refused, and nothing is exported)", name, v.value)
		}
	}
	for _, name := range otlpVars("HEADERS") {
		v, ok := env.vars[name]
		switch {
		case !ok:
		case v.from == fromSecret && !v.optional:
			p.add("%s: the Secret key %s is not optional: a collector that wants no key would need a Secret anyway", name, v.ref)
		case v.from != fromSecret && v.from != fromSecrets:
			from := v.from
			if from == "" {
				from = "written in the recipe"
			} else {
				from = "from " + from
			}
			p.add("%s is %s: headers may hold a key, take them from a Secret", name, from)
		}
	}
	for _, name := range []string{"TRACEPARENT", "TRACESTATE"} {
		if _, ok := env.vars[name]; ok {
			p.add("%s is set by the recipe: every run would claim the same made-up parent; malarun starts a trace of its own, or joins one its caller really has", name)
		}
	}

	ra, ok := env.vars["OTEL_RESOURCE_ATTRIBUTES"]
	switch {
	case !ok:
		p.add("OTEL_RESOURCE_ATTRIBUTES is not set: nothing says which workload a run's telemetry came from")
	case ra.from != "":
		p.add("OTEL_RESOURCE_ATTRIBUTES comes from %s: write it in the recipe, where it can be checked", ra.from)
	default:
		for _, item := range strings.Split(ra.value, ",") {
			k, v, ok := strings.Cut(strings.TrimSpace(item), "=")
			k = strings.TrimSpace(k)
			switch {
			case !ok || k == "":
				p.add("OTEL_RESOURCE_ATTRIBUTES: %q is not key=value", item)
			case strings.Contains(strings.ToLower(k), "issue") || env.carriesIssue(v):
				p.add("resource attribute %s=%s carries the issue id: it is on the spans (malarun.issue); on metrics it would make series per issue", k, v)
			case !slices.Contains(resourceKeys, k):
				p.add("resource attribute %s is not one of the semantic conventions' resource keys with few values %q", k, resourceKeys)
			}
		}
	}
	return p
}

// otlpHTTPURL accepts a collector's OTLP/HTTP endpoint: http(s), a host,
// port 4318. The general endpoint (base) is a base that malarun appends
// /v1/traces and /v1/metrics to.
func otlpHTTPURL(s string, base bool) error {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Hostname() == "" {
		return fmt.Errorf("is not an http:// or https:// URL with a host")
	}
	switch u.Port() {
	case "4318":
	case "4317":
		return fmt.Errorf("is on OTLP/gRPC's port, 4317: malarun exports http/protobuf only, to the collector's 4318")
	default:
		return fmt.Errorf("is not on the OTLP/HTTP port, 4318")
	}
	if base && regexp.MustCompile(`/v1/\w+/?$`).MatchString(u.Path) {
		return fmt.Errorf("ends in a signal's path: OTEL_EXPORTER_OTLP_ENDPOINT is a base, malarun appends /v1/traces and /v1/metrics")
	}
	return nil
}

// isOTelVar reports whether malarun's telemetry reads the variable.
func isOTelVar(name string) bool {
	return strings.HasPrefix(name, "OTEL_") || name == "TRACEPARENT" || name == "TRACESTATE"
}

// checkKubeOTel checks the telemetry variables of a Kubernetes container
// (the Job's or the Argo template's). configMaps are deploy/kubernetes's;
// markers are text that names the issue where it is written (Argo's
// {{inputs.parameters.issue}}); fields are the downward API's fields of
// the pod beyond those every pod has (its labels and annotations).
func checkKubeOTel(c corev1.Container, configMaps map[string]*corev1.ConfigMap, markers, fields []string) (p problems) {
	hasMarker := func(s string) bool {
		return slices.ContainsFunc(markers, func(m string) bool { return strings.Contains(s, m) })
	}
	// The variables that hold the issue: from the index, or written with a
	// marker, or built from either (in order: $(VAR) sees those above).
	issueVars := perIssueVars(c)
	for _, e := range c.Env {
		if e.ValueFrom == nil && (hasMarker(e.Value) || mentions(e.Value, issueVars)) && !slices.Contains(issueVars, e.Name) {
			issueVars = append(issueVars, e.Name)
		}
	}
	env := otelEnv{vars: map[string]otelVar{}, carriesIssue: func(s string) bool { return mentions(s, issueVars) || hasMarker(s) }}
	defined := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		if isOTelVar(e.Name) {
			v := otelVar{value: e.Value}
			switch f := e.ValueFrom; {
			case f == nil:
				p = append(p, checkRefs(e, defined, fields)...)
			case f.ConfigMapKeyRef != nil:
				v.from, v.ref = fromConfigMap, f.ConfigMapKeyRef.Name+"/"+f.ConfigMapKeyRef.Key
				v.optional = f.ConfigMapKeyRef.Optional != nil && *f.ConfigMapKeyRef.Optional
				cm, ok := configMaps[f.ConfigMapKeyRef.Name]
				if ok {
					v.value, ok = cm.Data[f.ConfigMapKeyRef.Key]
				}
				v.missing = !ok
			case f.SecretKeyRef != nil:
				v.from, v.ref = fromSecret, f.SecretKeyRef.Name+"/"+f.SecretKeyRef.Key
				v.optional = f.SecretKeyRef.Optional != nil && *f.SecretKeyRef.Optional
			case f.FieldRef != nil:
				v.from = "the downward API (" + f.FieldRef.FieldPath + ")"
			default:
				v.from = "a resource field"
			}
			env.vars[e.Name] = v
		}
		defined[e.Name] = e
	}
	return append(p, checkOTel(env)...)
}

// checkRefs: each $(VAR) in e's value is a variable defined above it (the
// kubelet leaves any other reference as written), and one the downward
// API can fill is a field a pod has.
func checkRefs(e corev1.EnvVar, defined map[string]corev1.EnvVar, fields []string) (p problems) {
	for _, m := range regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`).FindAllStringSubmatch(e.Value, -1) {
		ref, ok := defined[m[1]]
		switch {
		case !ok:
			p.add("%s refers to $(%s), which is not defined above it: the kubelet would leave it as written", e.Name, m[1])
		case ref.ValueFrom != nil && ref.ValueFrom.FieldRef != nil:
			path := ref.ValueFrom.FieldRef.FieldPath
			if !slices.Contains(podFields, path) && !slices.Contains(fields, path) {
				p.add("%s refers to $(%s), the field %s, which the downward API does not give this pod (%q)", e.Name, m[1], path, append(slices.Clone(podFields), fields...))
			}
		}
	}
	return p
}

// podFields are the downward API's fields of every pod that an environment
// variable can hold (labels and annotations aside).
var podFields = []string{"metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName",
	"status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"}

// labelField is the downward API's field of a pod label.
func labelField(key string) string { return "metadata.labels['" + key + "']" }

// jobPodFields are the fields of a Job's pod beyond podFields: its
// completion index, and the labels the Job controller (the Job's name
// since Kubernetes 1.27, the index since 1.28) and the template give it.
func jobPodFields(template corev1.PodTemplateSpec) []string {
	fields := []string{indexAnnotation, labelField("batch.kubernetes.io/job-completion-index"),
		labelField("batch.kubernetes.io/job-name"), labelField("job-name"),
		labelField("batch.kubernetes.io/controller-uid"), labelField("controller-uid")}
	for k := range template.Labels {
		fields = append(fields, labelField(k))
	}
	return fields
}

// checkActionsOTel checks the telemetry variables malarun's step sees: the
// workflow's, the job's and the step's own, the step's winning.
func checkActionsOTel(wf *actionlint.Workflow, job *actionlint.Job, run *actionlint.Step) problems {
	env := otelEnv{vars: map[string]otelVar{}, carriesIssue: func(s string) bool {
		return regexp.MustCompile(`matrix\.issue|inputs\.issues|env\.ISSUE|\$\{?ISSUE\b`).MatchString(s)
	}}
	vars := regexp.MustCompile(`^\$\{\{\s*vars\.\w+\s*\}\}$`)
	secrets := regexp.MustCompile(`^\$\{\{\s*secrets\.\w+\s*\}\}$`)
	for _, e := range []*actionlint.Env{wf.Env, job.Env, run.Env} {
		if e == nil {
			continue
		}
		for _, kv := range e.Vars {
			name, value := kv.Name.Value, strings.TrimSpace(kv.Value.Value)
			if !isOTelVar(name) {
				continue
			}
			v := otelVar{value: value}
			switch {
			case vars.MatchString(value):
				v.from = fromVars
			case secrets.MatchString(value):
				v.from = fromSecrets
			}
			env.vars[name] = v
		}
	}
	return checkOTel(env)
}

// setEnv replaces the container's variable e.Name with e, or adds e last.
func setEnv(c *corev1.Container, e corev1.EnvVar) {
	for i := range c.Env {
		if c.Env[i].Name == e.Name {
			c.Env[i] = e
			return
		}
	}
	c.Env = append(c.Env, e)
}

func dropEnv(c *corev1.Container, name string) {
	c.Env = slices.DeleteFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == name })
}

// otelBreaks are the ways a Kubernetes container's telemetry can go wrong,
// each with what its check must say (TestKubernetesChecksCatch and
// TestArgoChecksCatch run them on their recipes).
var otelBreaks = []struct {
	name   string
	mutate func(c *corev1.Container, configMaps map[string]*corev1.ConfigMap)
	want   string
}{
	{"no endpoint", func(c *corev1.Container, _ map[string]*corev1.ConfigMap) { dropEnv(c, "OTEL_EXPORTER_OTLP_ENDPOINT") },
		"OTEL_EXPORTER_OTLP_ENDPOINT is not set"},
	{"the gRPC port", func(_ *corev1.Container, cms map[string]*corev1.ConfigMap) {
		cms["malarun-config"].Data["otlp-endpoint"] = "http://otel-collector.observability.svc:4317"
	}, "is on OTLP/gRPC's port, 4317"},
	{"no port", func(_ *corev1.Container, cms map[string]*corev1.ConfigMap) {
		cms["malarun-config"].Data["otlp-endpoint"] = "http://otel-collector.observability.svc"
	}, "is not on the OTLP/HTTP port, 4318"},
	{"endpoint key required", func(c *corev1.Container, _ map[string]*corev1.ConfigMap) {
		for i := range c.Env {
			if c.Env[i].Name == "OTEL_EXPORTER_OTLP_ENDPOINT" {
				c.Env[i].ValueFrom.ConfigMapKeyRef.Optional = nil
			}
		}
	}, "is not optional: a cluster without a collector"},
	{"endpoint key not in the recipe", func(_ *corev1.Container, cms map[string]*corev1.ConfigMap) {
		delete(cms["malarun-config"].Data, "otlp-endpoint")
	}, "malarun-config/otlp-endpoint is not in the recipe"},
	{"a host, not a URL", func(c *corev1.Container, _ map[string]*corev1.ConfigMap) {
		setEnv(c, corev1.EnvVar{Name: "OTEL_EXPORTER_OTLP_ENDPOINT", Value: "otel-collector:4318"})
	}, "is not an http:// or https:// URL"},
	{"a signal's path on the base", func(c *corev1.Container, _ map[string]*corev1.ConfigMap) {
		setEnv(c, corev1.EnvVar{Name: "OTEL_EXPORTER_OTLP_ENDPOINT", Value: "http://otel-collector:4318/v1/traces"})
	}, "is a base"},
	{"a per-signal endpoint on gRPC", func(c *corev1.Container, _ map[string]*corev1.ConfigMap) {
		setEnv(c, corev1.EnvVar{Name: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", Value: "http://otel-collector:4317/v1/traces"})
	}, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT \"http://otel-collector:4317/v1/traces\" is on OTLP/gRPC's port"},
	{"grpc", func(c *corev1.Container, _ map[string]*corev1.ConfigMap) {
		setEnv(c, corev1.EnvVar{Name: "OTEL_EXPORTER_OTLP_PROTOCOL", Value: "grpc"})
	}, "OTEL_EXPORTER_OTLP_PROTOCOL \"grpc\""},
	{"headers written out", func(c *corev1.Container, _ map[string]*corev1.ConfigMap) {
		setEnv(c, corev1.EnvVar{Name: "OTEL_EXPORTER_OTLP_HEADERS", Value: "authorization=Bearer%20abc"})
	}, "OTEL_EXPORTER_OTLP_HEADERS is written in the recipe: headers may hold a key"},
	{"headers from a ConfigMap", func(c *corev1.Container, _ map[string]*corev1.ConfigMap) {
		setEnv(c, corev1.EnvVar{Name: "OTEL_EXPORTER_OTLP_METRICS_HEADERS", ValueFrom: &corev1.EnvVarSource{
			ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "malarun-config"}, Key: "headers"}}})
	}, "OTEL_EXPORTER_OTLP_METRICS_HEADERS is from a ConfigMap key"},
	{"headers Secret required", func(c *corev1.Container, _ map[string]*corev1.ConfigMap) {
		for i := range c.Env {
			if c.Env[i].Name == "OTEL_EXPORTER_OTLP_HEADERS" {
				c.Env[i].ValueFrom.SecretKeyRef.Optional = nil
			}
		}
	}, "OTEL_EXPORTER_OTLP_HEADERS: the Secret key malarun-otel/headers is not optional"},
	{"a made-up parent", func(c *corev1.Container, _ map[string]*corev1.ConfigMap) {
		setEnv(c, corev1.EnvVar{Name: "TRACEPARENT", Value: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})
	}, "TRACEPARENT is set by the recipe"},
	{"no resource attributes", func(c *corev1.Container, _ map[string]*corev1.ConfigMap) { dropEnv(c, "OTEL_RESOURCE_ATTRIBUTES") },
		"OTEL_RESOURCE_ATTRIBUTES is not set"},
	{"a key of malarun's own", func(c *corev1.Container, _ map[string]*corev1.ConfigMap) {
		appendAttr(c, "malarun.workload=fixes")
	}, "resource attribute malarun.workload is not one of"},
	{"the run's id", func(c *corev1.Container, _ map[string]*corev1.ConfigMap) {
		appendAttr(c, "cicd.pipeline.run.id=$(K8S_POD_NAME)")
	}, "resource attribute cicd.pipeline.run.id is not one of"},
	{"an undefined variable", func(c *corev1.Container, _ map[string]*corev1.ConfigMap) { appendAttr(c, "k8s.node.name=$(NODE_NAME)") },
		"refers to $(NODE_NAME), which is not defined above it"},
	{"attributes above their variables", func(c *corev1.Container, _ map[string]*corev1.ConfigMap) {
		i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "OTEL_RESOURCE_ATTRIBUTES" })
		e := c.Env[i]
		c.Env = slices.Insert(slices.Delete(c.Env, i, i+1), 0, e)
	}, "refers to $(K8S_NAMESPACE_NAME), which is not defined above it"},
	{"a label the pod does not have", func(c *corev1.Container, _ map[string]*corev1.ConfigMap) {
		c.Env = slices.Insert(c.Env, 0, corev1.EnvVar{Name: "K8S_NODE_NAME", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['kubernetes.io/hostname']"}}})
		appendAttr(c, "k8s.node.name=$(K8S_NODE_NAME)")
	}, "the field metadata.labels['kubernetes.io/hostname'], which the downward API does not give"},
}

// appendAttr adds key=value to the container's OTEL_RESOURCE_ATTRIBUTES.
func appendAttr(c *corev1.Container, kv string) {
	for i := range c.Env {
		if c.Env[i].Name == "OTEL_RESOURCE_ATTRIBUTES" {
			c.Env[i].Value += "," + kv
		}
	}
}
