#!/usr/bin/env bash
# make test-arm64-qemu (issue 22): builds the linux/arm64 test binary of
# each package in PACKAGES (default ./internal/...) and runs it through
# qemu-aarch64-static, invoked directly: no binfmt_misc registration, which
# a CI machine's sandbox may not allow and which would change how children
# start. A test that cannot work there skips through internal/testing/qemutest,
# saying why; this script lists every such skip at the end.
#
# -test.short as `go test -short`; no -race (it needs cgo, off when cross
# compiling). Each binary runs in its package's folder, as go test runs it,
# so that testdata/ is found. Logs stay in .cache/qemu-arm64/.
set -euo pipefail
cd "$(dirname "$0")/.."

qemu=qemu-aarch64-static
if ! command -v "$qemu" >/dev/null; then
	echo "test-arm64-qemu: $qemu not found: apt-get install qemu-user-static" >&2
	exit 1
fi
out=$PWD/.cache/qemu-arm64
rm -rf "$out"
mkdir -p "$out"

# Each package with tests, and its folder: "import/path /its/dir".
mapfile -t listed < <(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Dir}}{{end}}' ${PACKAGES:-./internal/...})
pkgs=("${listed[@]%% *}")
# One go test -c for all: the go command builds them in parallel. With
# several packages -o must be a folder; each binary is named <last element>.test.
start=$SECONDS
GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go test -c -o "$out/" "${pkgs[@]}"
echo "test-arm64-qemu: built ${#pkgs[@]} linux/arm64 test binaries in $((SECONDS - start)) s"

failed=() passed=0 failures=0 skipped=0
for entry in "${listed[@]}"; do
	pkg=${entry%% *} dir=${entry#* }
	name=${pkg##*/}
	log=$out/$name.log
	t0=$SECONDS
	rc=0
	# timeout: a hang in qemu (see qemutest.Reexec) must end the run, not CI's
	# 90 minutes; -test.timeout comes first and prints every goroutine.
	(cd "$dir" &&
		MALARUN_UNDER_QEMU=1 MALARUN_QEMU_SKIPS="$out/$name.skips" \
			timeout -k 10s 6m "$qemu" "$out/$name.test" -test.v -test.short -test.timeout 5m) >"$log" 2>&1 || rc=$?
	# Top-level tests only: subtests are counted with their parent.
	p=$(grep -c '^--- PASS' "$log" || true)
	f=$(grep -c '^--- FAIL' "$log" || true)
	s=$(grep -c '^--- SKIP' "$log" || true)
	passed=$((passed + p)) failures=$((failures + f)) skipped=$((skipped + s))
	verdict=ok
	if [ "$rc" -ne 0 ]; then
		verdict=FAIL failed+=("$pkg")
	fi
	printf '%-4s %-45s %3d passed, %d failed, %d skipped (%d s)\n' "$verdict" "${pkg#github.com/malarun/malarun/}" "$p" "$f" "$s" $((SECONDS - t0))
done

# The skips, grouped by reason: "package: TestName" under each.
for f in "$out"/*.test; do
	if [ -s "${f%.test}.skips" ]; then sed "s|^|$(basename "$f" .test): |" "${f%.test}.skips"; fi
done | awk -F'\t' '
	{ names[$2] = names[$2] "\n  " $1; n[$2]++; total++ }
	END {
		if (total) print "== " total " tests skipped under qemu-user (internal/testing/qemutest), by reason:"
		for (r in names) print "-- " n[r] " skipped: " r names[r]
	}'
for pkg in "${failed[@]}"; do
	echo "== FAILED under qemu-user: ${pkg#github.com/malarun/malarun/} (log: $out/${pkg##*/}.log)"
	cat "$out/${pkg##*/}.log"
done
echo "test-arm64-qemu: $passed passed, $failures failed, $skipped skipped in ${#pkgs[@]} packages ($((SECONDS - start)) s)"
[ ${#failed[@]} -eq 0 ]
