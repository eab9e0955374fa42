#!/bin/sh
# make deps: what the tests need beyond Go and Node, each named with the
# make target that needs it, and the commands that install what is missing.
# It only reports: it exits 0 whatever is missing (make test itself skips,
# loudly, what lacks a dependency, and fails in CI, CI=true). Exit 2 only
# for its own misuse. Arguments: the pinned CLIs, each as VERSION=PATH,
# the current one last.
set -u
missing=0
pkgs=
row() { printf '  %-22s %-9s %s\n' "$1" "$2" "$3"; }

echo "deps: what the tests use beyond Go and Node, and the targets that need it:"
clis=
n=0
for arg in "$@"; do
	n=$((n + 1))
	use="make test (the end-to-end tests run against each pinned CLI)"
	[ "$n" != "$#" ] || use="make test, make try, make demo, make demo-fleet" # the current one
	case $arg in
	*=*) ;;
	*) echo "deps: want VERSION=PATH, not $arg" >&2; exit 2 ;;
	esac
	v=${arg%%=*} bin=${arg#*=}
	if [ -x "$bin" ]; then
		row "claude $v" here "$use"
	else
		row "claude $v" MISSING "$use"
		missing=1 clis=1
	fi
done
# command, Debian package, the targets that need it
for t in "chromium:chromium:make test (the tests that open the HTML pages)" \
	"groff:groff-base:make test (the manual page's tests)" \
	"qemu-aarch64-static:qemu-user-static:make test-arm64-qemu only" \
	"etcd:etcd-server:make cluster-test only"; do
	cmd=${t%%:*} rest=${t#*:}
	pkg=${rest%%:*} use=${rest#*:}
	if command -v "$cmd" >/dev/null 2>&1 || { [ "$cmd" = chromium ] && [ -n "${MALARUN_CHROMIUM:-}" ]; }; then
		row "$cmd" here "$use"
	else
		row "$cmd" MISSING "$use"
		missing=1 pkgs="$pkgs $pkg"
	fi
done
if [ "$missing" = 0 ]; then
	echo "deps: everything the tests use is here"
	exit 0
fi
echo "To install what is missing:"
[ -z "$clis" ] || echo "  make e2e-deps                  # the pinned CLIs, from npm, into .cache/"
[ -z "$pkgs" ] || echo "  apt-get update && apt-get install -y --no-install-recommends$pkgs   # Debian, Ubuntu"
echo "(make deps only reports: it exits 0; what make test lacks, it skips and says so, and fails with CI=true.)"
exit 0
