#!/usr/bin/env bash
# Builds the Kubernetes control plane make cluster-test runs
# (kube-apiserver, kube-controller-manager) from the Go module proxy, with
# tools/kube's module, into $1 (.cache/kube/<kubernetes>-<go>), unless the
# binaries there already say they are that version. Cold on 2 cores: about
# 15 minutes; linking the apiserver peaks at about 2.7 GB.
set -euo pipefail
out=$1
version=$(sed -n 's/^require k8s.io\/kubernetes \(v[0-9.]*\)$/\1/p' "$(dirname "$0")/../tools/kube/go.mod")
have() { "$out/$1" --version 2>/dev/null | grep -qx "Kubernetes $version"; }
if have kube-apiserver && have kube-controller-manager; then
	echo "kube-apiserver and kube-controller-manager $version already built: $out"
	exit 0
fi
echo "== building kube-apiserver and kube-controller-manager $version into $out (cold: about 15 min)"
minor=${version#v*.}; minor=${minor%%.*}
mkdir -p "$out"
start=$SECONDS
(cd "$(dirname "$0")/../tools/kube" && go build -trimpath -o "$out/" \
	-ldflags "-X k8s.io/component-base/version.gitVersion=$version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor" \
	k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager)
have kube-apiserver && have kube-controller-manager || { echo "built binaries do not say Kubernetes $version" >&2; exit 1; }
echo "built in $((SECONDS - start)) s"
