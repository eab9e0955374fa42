package cluster_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What the kubelet stand-in makes of a pod's spec: the mounts of its
// mount namespace, the volumes' folders on the node, the container's
// environment (kubelet_test.go runs them).

// mountScript is the shell that binds the pod's volumes at c's mount
// paths, inside the pod's mount namespace: the claude package first (the
// image's copy, at /opt/malarun-cluster-test/claude: /work, where it is
// kept, may be covered by a mount), a fresh HOME (the container's writable
// layer), then each volume mount in order.
func (s *standIn) mountScript(pod *corev1.Pod, c *corev1.Container, vars map[string]string) (string, error) {
	lines := []string{
		"mount --bind " + quote(s.claude) + " /opt/malarun-cluster-test/claude",
		"mount -t tmpfs tmpfs /home/malarun",
	}
	for _, m := range c.VolumeMounts {
		src, err := s.volumeDir(pod, m.Name)
		if err != nil {
			return "", err
		}
		sub := m.SubPath
		if m.SubPathExpr != "" {
			sub = expand(m.SubPathExpr, vars)
		}
		if sub != "" {
			src = filepath.Join(src, sub)
			if err := os.MkdirAll(src, 0o755); err != nil {
				return "", err
			}
		}
		lines = append(lines, "mkdir -p "+quote(m.MountPath), "mount --bind "+quote(src)+" "+quote(m.MountPath))
		if m.ReadOnly {
			lines = append(lines, "mount -o remount,bind,ro "+quote(m.MountPath))
		}
	}
	return strings.Join(lines, "\n"), nil
}

// volumeDir is the node's folder for one of the pod's volumes.
func (s *standIn) volumeDir(pod *corev1.Pod, name string) (string, error) {
	for _, v := range pod.Spec.Volumes {
		if v.Name != name {
			continue
		}
		switch {
		case v.PersistentVolumeClaim != nil:
			dir := filepath.Join(s.root, pod.Namespace, "pvc", v.PersistentVolumeClaim.ClaimName)
			return dir, os.MkdirAll(dir, 0o755)
		case v.ConfigMap != nil:
			return s.configMapDir(pod, v)
		}
		return "", fmt.Errorf("volume %s: only claims and config maps are played", name)
	}
	return "", fmt.Errorf("no volume %s", name)
}

// configMapDir writes a ConfigMap volume's files (its items, else every key).
func (s *standIn) configMapDir(pod *corev1.Pod, v corev1.Volume) (string, error) {
	dir := filepath.Join(s.root, pod.Namespace, "pods", string(pod.UID), v.Name)
	if _, err := os.Stat(dir); err == nil {
		return dir, nil
	}
	cm, err := s.client.CoreV1().ConfigMaps(pod.Namespace).Get(context.Background(), v.ConfigMap.Name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	files := map[string]string{}
	if len(v.ConfigMap.Items) > 0 {
		for _, it := range v.ConfigMap.Items {
			files[it.Path] = cm.Data[it.Key]
		}
	} else {
		for k, val := range cm.Data {
			files[k] = val
		}
	}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// containerEnv resolves c's env as the kubelet does: values with $(VAR)
// of earlier ones, the downward API, config map and secret keys.
func (s *standIn) containerEnv(pod *corev1.Pod, c *corev1.Container) ([]string, error) {
	ctx := context.Background()
	vars := map[string]string{}
	var out []string
	for _, e := range c.Env {
		val := expand(e.Value, vars)
		if f := e.ValueFrom; f != nil {
			switch {
			case f.FieldRef != nil:
				val = fieldValue(pod, f.FieldRef.FieldPath)
			case f.ConfigMapKeyRef != nil:
				cm, err := s.client.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, f.ConfigMapKeyRef.Name, metav1.GetOptions{})
				v, ok := "", false
				if err == nil {
					v, ok = cm.Data[f.ConfigMapKeyRef.Key]
				}
				if !ok && (f.ConfigMapKeyRef.Optional == nil || !*f.ConfigMapKeyRef.Optional) {
					return nil, fmt.Errorf("env %s: config map %s key %s: %v", e.Name, f.ConfigMapKeyRef.Name, f.ConfigMapKeyRef.Key, err)
				}
				if !ok {
					continue
				}
				val = v
			case f.SecretKeyRef != nil:
				sec, err := s.client.CoreV1().Secrets(pod.Namespace).Get(ctx, f.SecretKeyRef.Name, metav1.GetOptions{})
				var v []byte
				ok := false
				if err == nil {
					v, ok = sec.Data[f.SecretKeyRef.Key]
				}
				if !ok && (f.SecretKeyRef.Optional == nil || !*f.SecretKeyRef.Optional) {
					return nil, fmt.Errorf("env %s: secret %s key %s: %v", e.Name, f.SecretKeyRef.Name, f.SecretKeyRef.Key, err)
				}
				if !ok {
					continue
				}
				val = string(v)
			}
		}
		vars[e.Name] = val
		out = append(out, e.Name+"="+val)
	}
	return out, nil
}

var fieldRe = regexp.MustCompile(`^metadata\.(annotations|labels)\['([^']+)'\]$`)

func fieldValue(pod *corev1.Pod, path string) string {
	switch path {
	case "metadata.name":
		return pod.Name
	case "metadata.namespace":
		return pod.Namespace
	case "metadata.uid":
		return string(pod.UID)
	}
	if m := fieldRe.FindStringSubmatch(path); m != nil {
		if m[1] == "annotations" {
			return pod.Annotations[m[2]]
		}
		return pod.Labels[m[2]]
	}
	return ""
}

var varRe = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// expand replaces $(VAR) with a defined variable's value, as Kubernetes
// does; an undefined one stays as written.
func expand(s string, vars map[string]string) string {
	return varRe.ReplaceAllStringFunc(s, func(m string) string {
		if v, ok := vars[m[2:len(m)-1]]; ok {
			return v
		}
		return m
	})
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
