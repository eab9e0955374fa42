// Package deploy holds the recipes that run malarun over many issues — a
// Kubernetes Indexed Job (kubernetes/), an Argo WorkflowTemplate (argo/),
// GitHub Actions workflows (github-actions/) and the container image
// (Dockerfile) — and, in its tests, the checks that keep them true to the
// exit code contract that `malarun exit-codes --json` prints.
//
// It is a module of its own so that the Kubernetes, Argo, BuildKit and
// actionlint dependencies stay out of malarun's go.mod.
package deploy
