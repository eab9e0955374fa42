#!/usr/bin/env bash
# make bench: measure what malarun costs and how close it runs to its
# limits (issue 8), and print the results as Markdown tables.
#
#   1. the stream decoder's Go benchmarks against encoding/json in the same
#      go test run (internal/stream/bench_test.go), and malarun show on a
#      100 MB transcript (internal/replay/bench_test.go);
#   2. tools/bench (a Go module of its own, so that the product's ./...
#      leaves it out): the built malarun binary against the fake CLI of
#      internal/testing/testchild and against the real CLI (installed by
#      `make e2e-deps`) talking to internal/testing/fakeapi: overhead, detection
#      accuracy, kill latency, idle cost, peak RSS, 50 runs at once.
#
# Environment:
#   BENCH_OUT=FILE     also write the report to FILE (default: only stdout)
#   BENCH_QUICK=1      a smoke run with small sample counts (about 1 minute)
#   BENCH_COUNT=N      rounds of the decoder benchmarks (default 5)
#   BENCH_ARGS="..."   more flags for tools/bench (see -h)
#   MALARUN_CLAUDE_BIN the real CLI (default: the one make e2e-deps installs)
#
# Temporary files (state dirs, transcripts, a 100 MB one among them) go
# under $TMPDIR and are removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

start=$(date +%s)
work=$(mktemp -d "${TMPDIR:-/tmp}/malarun-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

count=${BENCH_COUNT:-5}
args=()
if [[ "${BENCH_QUICK:-}" == 1 ]]; then
	count=1
	args+=(-runs 10 -rounds 3 -hangs 20 -kills 5 -idle 10s -rss-runs 1 -scale 10)
fi
# shellcheck disable=SC2206 # word splitting of BENCH_ARGS is the point
args+=(${BENCH_ARGS:-})

claude=${MALARUN_CLAUDE_BIN:-.cache/claude-code/$(awk '$1=="CLAUDE_CODE_VERSIONS"{print $NF}' Makefile)/node_modules/.bin/claude}
if [[ -x "$claude" ]]; then
	args+=(-claude "$claude")
	claude_version=$("$claude" --version 2>/dev/null | head -1 || echo unknown)
else
	echo "!!! the real claude CLI is missing ($claude): run \`make e2e-deps\`; the comparison with it is skipped !!!" >&2
	claude_version="missing"
fi

echo "bench: building malarun and the harness..." >&2
CGO_ENABLED=0 go build -o "$work/malarun" ./cmd/malarun  # static, as released
(cd tools/bench && go vet . && go build -o "$work/malarun-bench" .)

# Decoder and baseline run back to back on each input, round after round,
# so that a change in the machine's load hits both sides of a ratio alike.
echo "bench: stream decoder benchmarks ($count rounds)..." >&2
go test -c -o "$work/stream.test" ./internal/stream/
inputs=$(sed -n 's/^\t{name: "\([^"]*\)".*/\1/p' internal/stream/bench_test.go)
[[ -n "$inputs" ]] || { echo "bench: no benchInputs found in internal/stream/bench_test.go" >&2; exit 1; }
for ((round = 1; round <= count; round++)); do
	for in in $inputs; do
		(cd internal/stream && "$work/stream.test" -test.run '^$' -test.benchmem \
			-test.bench "^(BenchmarkDecode|BenchmarkJSONBaseline)\$/^$in\$") >>"$work/decoder.txt"
	done
done

# malarun show on a run with a 100 MB transcript (issue 21: at least
# 50 MB/s, in memory that does not grow with the transcript), each format.
echo "bench: malarun show on a 100 MB transcript ($count rounds)..." >&2
go test -c -o "$work/replay.test" ./internal/replay/
(cd internal/replay && "$work/replay.test" -test.run '^$' -test.benchmem -test.benchtime 1x \
	-test.count "$count" -test.bench '^BenchmarkShow$') >"$work/show.txt"

echo "bench: malarun scenarios..." >&2
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
"$work/malarun-bench" -malarun "$work/malarun" -decoder "$work/decoder.txt" \
	-transcripts testdata/transcripts -json "$work/raw.json" "${args[@]}" >"$work/tables.md"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ -n "$(git status --porcelain 2>/dev/null)" ]]; then
	commit="$commit (with uncommitted changes)"
fi
{
	echo "# malarun benchmarks"
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- commit: $commit"
	echo "- machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(awk '/MemTotal/ {printf "%.0f GB RAM", $2/1048576}' /proc/meminfo)"
	echo "- kernel: $(uname -sr); temp dir on $(df -T "$work" | awk 'NR==2 {print $2}')"
	echo "- $(go version | cut -d' ' -f3-); claude CLI $claude_version"
	echo "- load average (1, 5, 15 min) before the scenarios: $load_before; after: $load_after"
	echo "- command: make bench${BENCH_QUICK:+ (BENCH_QUICK=1)}${BENCH_ARGS:+ BENCH_ARGS=\"$BENCH_ARGS\"}; took $(($(date +%s) - start)) s"
	echo
	cat "$work/tables.md"
	echo
	echo "### malarun show on a 100 MB transcript (go test -bench BenchmarkShow, $count rounds)"
	echo
	echo "| format | MB/s (median) | peak heap MB (max) | B/op (median) |"
	echo "| --- | ---: | ---: | ---: |"
	# col F UNIT: the values before UNIT on format F's lines, sorted.
	col() { grep "^BenchmarkShow/$1-" "$work/show.txt" | awk -v u="$2" '{for (i = 2; i < NF; i++) if ($(i+1) == u) print $i}' | sort -g; }
	median() { awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
	for f in $(sed -n 's/^BenchmarkShow\/\([a-z]*\)-.*/\1/p' "$work/show.txt" | awk '!seen[$0]++'); do
		printf '| %s | %s | %s | %s |\n' "$f" "$(col "$f" MB/s | median)" "$(col "$f" peak-heap-MB | tail -1)" "$(col "$f" B/op | median)"
	done
	echo
	echo '```'
	grep -E '^BenchmarkShow' "$work/show.txt"
	echo '```'
	echo
	echo "### Decoder benchmark output (go test -bench, $count rounds)"
	echo
	echo '```'
	grep -m3 -E '^(goos|goarch|cpu)' "$work/decoder.txt"
	grep -E '^Benchmark' "$work/decoder.txt"
	echo '```'
} >"$work/report.md"

cat "$work/report.md"
if [[ -n "${BENCH_OUT:-}" ]]; then
	cp "$work/report.md" "$BENCH_OUT"
	cp "$work/raw.json" "${BENCH_OUT%.md}.raw.json"
	echo "bench: report written to $BENCH_OUT" >&2
fi
