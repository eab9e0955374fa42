#!/usr/bin/env bash
# Writes this module's go.mod and go.sum for Kubernetes $1 (e.g. v1.37.2):
# k8s.io/kubernetes lists its staging modules at v0.0.0 (its repository
# replaces them with folders), so each is replaced by its published
# version, v0.<minor>.<patch>. Run it to move make cluster-test's version.
set -euo pipefail
cd "$(dirname "$0")"
k=${1:?usage: gen.sh vMAJOR.MINOR.PATCH}
s=v0.${k#v1.}
mod=$(go mod download -json "k8s.io/kubernetes@$k" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
go_line=$(sed -n 's/^go \(.*\)$/\1/p' "$mod")
{
	sed -n '1,/^module /p' go.mod
	printf '\ngo %s\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n' "$go_line" "$k"
	grep -E '^\s+k8s.io/[a-z0-9-]+ v0.0.0$' "$mod" | awk -v s="$s" '{print "\t" $1 " => " $1 " " s}'
	printf ')\n'
} > go.mod.new
mv go.mod.new go.mod
rm -f go.sum
GOFLAGS=-mod=mod go get -tool "k8s.io/kubernetes/cmd/kube-apiserver@$k" "k8s.io/kubernetes/cmd/kube-controller-manager@$k"
