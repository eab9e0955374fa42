#!/usr/bin/env bash
# Re-records the real CLI's output for testdata/transcripts/<version>/ (see
# the README.md there): the pinned current Claude Code CLI (the last of the
# Makefile's CLAUDE_CODE_VERSIONS, installed by `make e2e-deps`) runs
# `claude -p --output-format stream-json --verbose` against the fake API of
# cmd/fakeapi on 127.0.0.1, which scripts the model's answers: no network,
# no key. Takes about a minute.
#
# For each scenario it writes NAME.jsonl (the CLI's stdout, a regular file
# as malarun uses: DESIGN fact 13) and NAME.stderr (the CLI's stderr, then a
# last line "# exit code N; exited by itself after S s"). Scenarios:
#
#   text-success               a text reply: init, assistant, result
#   tool-use-success           a Bash call, its tool_result, a text reply
#   sleep-blocked              Bash `sleep 30; echo finished`: refused at once,
#                              <tool_use_error>Blocked: ... (fact 18)
#   background-task            Bash run_in_background (10 s); the turn's result,
#                              the CLI stays alive; task_notification completed,
#                              a second turn and result (origin task-notification)
#   background-task-deadline   a background Bash of 60 s with timeout 10000 ms:
#                              stopped at 10 s, notified, second turn, exit
#   background-ignores-ceiling CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS=5000 and a
#                              background Bash of 20 s: the CLI still waits the
#                              20 s (the ceiling spares a Bash within its deadline)
#   monitor-ceiling            a Monitor that never ends (after ToolSearch loads
#                              it) with the ceiling at 5000 ms: stopped 5 s after
#                              the last turn, a note on stderr, no second turn
#   monitor-forever            (only when named: ~10 minutes) the same Monitor
#                              with no ceiling set: -p waits for the monitor's
#                              own 600 s expiry, then a second turn
#   startup-config-invalid     a ~/.claude.json that does not parse: a result
#                              with startup_failure_reason config_file_invalid
#                              and its path (2.1.332), exit 1
#   startup-proxy-invalid      HTTPS_PROXY=not-a-url: proxy_invalid (2.1.332,
#                              with CLAUDE_CODE_STARTUP_FAILURE_RESULTS=1)
#   startup-bypass-root        --dangerously-skip-permissions as root: bypass_root
#   startup-tmpdir-unusable    CLAUDE_CODE_TMPDIR=/dev/null/x: temp_dir_unusable
#   prompt-slash-clear         the prompt /clear: success with num_turns 0, the
#                              model never asked (docs/design.md §F38)
#   no-response                a request the fake API never answers (no headers),
#                              then an answer: api_retry with no_response (2.1.332,
#                              its first-byte window armed: §F37)
#   no-response-twice          two never answered: api_error no_response, exit 1
#
# Machine-specific values are normalised so that re-recording changes only
# what the CLI itself varies (uuids, timestamps, durations): the temporary
# HOME becomes /home/user, the working directory /home/user/project (also in
# its encoded form, -home-user-project), the messaging socket's pid PID.
# Session ids are fixed per scenario (--session-id, as malarun passes it).
#
# Usage: scripts/record-transcripts.sh [-o DIR] [-v VERSION] [SCENARIO...]
#   -o DIR      where to write (default testdata/transcripts/VERSION)
#   -v VERSION  an installed CLI version (default: the Makefile's current one)
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(awk '$1 == "CLAUDE_CODE_VERSIONS" && $2 == ":=" { print $NF }' Makefile)
out=""
while getopts "o:v:" opt; do
	case $opt in
	o) out=$OPTARG ;;
	v) version=$OPTARG ;;
	*) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
out=${out:-testdata/transcripts/$version}

claude=$PWD/.cache/claude-code/$version/node_modules/.bin/claude
if [[ ! -x $claude ]]; then
	echo "record-transcripts: $claude is missing: run \`make e2e-deps\`" >&2
	exit 1
fi
reported=$(DISABLE_AUTOUPDATER=1 "$claude" --version | cut -d' ' -f1)
if [[ $reported != "$version" ]]; then
	echo "record-transcripts: $claude reports $reported, want $version" >&2
	exit 1
fi

tmp=$(mktemp -d /tmp/malarun-record.XXXXXX)
api_pid=""
cleanup() {
	if [[ -n $api_pid ]]; then kill "$api_pid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# Each scenario: a fixed session id, the fake API's steps, and optionally
# extra environment (ENV=...) and claude flags (ARGS=...).
bg10='{"command":"timeout 10 tail -f /dev/null; echo bg-finished","run_in_background":true,"description":"Wait ten seconds"}'
bg60_deadline='{"command":"timeout 60 tail -f /dev/null; echo bg-finished","run_in_background":true,"timeout":10000,"description":"Wait a minute, at most ten seconds"}'
bg20='{"command":"timeout 20 tail -f /dev/null; echo bg-finished","run_in_background":true,"description":"Wait twenty seconds"}'
load_monitor='{"query":"select:Monitor","max_results":1}'
# 2.1.332's first-byte window, armed for the fake API (docs/design.md §F37):
# it takes the address for Anthropic's own only when told so.
first_byte=(_CLAUDE_CODE_ASSUME_FIRST_PARTY_BASE_URL=1 CLAUDE_STREAM_FIRST_BYTE_TIMEOUT_MS=10000 CLAUDE_ENABLE_BYTE_WATCHDOG=1)
monitor='{"description":"never ends","timeout_ms":600000,"command":"tail -f /dev/null"}'

scenario() {
	local name=$1
	case $name in
	text-success)
		session=00000000-0000-4000-8000-000000000001
		steps=("text:Hello from the fake API.") ;;
	tool-use-success)
		session=00000000-0000-4000-8000-000000000002
		steps=("bash:echo hello-from-tool" "text:All done.") ;;
	sleep-blocked)
		session=00000000-0000-4000-8000-000000000003
		steps=("bash:sleep 30; echo finished" "text:Blocked, so I stop.") ;;
	background-task)
		session=00000000-0000-4000-8000-000000000004
		steps=("tool:Bash:$bg10" "text:Started in the background." "text:The background task finished.") ;;
	background-task-deadline)
		session=00000000-0000-4000-8000-000000000005
		steps=("tool:Bash:$bg60_deadline" "text:Started in the background." "text:The background task was stopped.") ;;
	background-ignores-ceiling)
		session=00000000-0000-4000-8000-000000000006
		env=(CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS=5000)
		steps=("tool:Bash:$bg20" "text:Started in the background." "text:The background task finished.") ;;
	monitor-ceiling)
		session=00000000-0000-4000-8000-000000000007
		env=(CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS=5000)
		args=(--allowedTools Monitor)
		steps=("tool:ToolSearch:$load_monitor" "tool:Monitor:$monitor" "text:Monitor armed.") ;;
	monitor-forever)
		session=00000000-0000-4000-8000-000000000008
		args=(--allowedTools Monitor)
		limit=900
		steps=("tool:ToolSearch:$load_monitor" "tool:Monitor:$monitor" "text:Monitor armed." "text:The monitor expired.") ;;
	startup-config-invalid)
		session=00000000-0000-4000-8000-000000000011
		plant='printf %s "{\"numStartups\": 3," >"$home/.claude.json"'
		steps=("text:Never asked.") ;;
	startup-proxy-invalid)
		session=00000000-0000-4000-8000-000000000012
		env=(CLAUDE_CODE_STARTUP_FAILURE_RESULTS=1 HTTPS_PROXY=not-a-url)
		steps=("text:Never asked.") ;;
	startup-bypass-root)
		session=00000000-0000-4000-8000-000000000013
		env=(CLAUDE_CODE_STARTUP_FAILURE_RESULTS=1)
		args=(--dangerously-skip-permissions)
		steps=("text:Never asked.") ;;
	startup-tmpdir-unusable)
		session=00000000-0000-4000-8000-000000000014
		env=(CLAUDE_CODE_STARTUP_FAILURE_RESULTS=1 CLAUDE_CODE_TMPDIR=/dev/null/x)
		steps=("text:Never asked.") ;;
	prompt-slash-clear)
		session=00000000-0000-4000-8000-000000000015
		prompt="/clear"
		steps=("text:Never asked.") ;;
	no-response)
		session=00000000-0000-4000-8000-000000000016
		env=("${first_byte[@]}")
		steps=("noanswer" "text:Answered after the retry.") ;;
	no-response-twice)
		session=00000000-0000-4000-8000-000000000017
		env=("${first_byte[@]}" API_TIMEOUT_MS=20000)
		steps=("2*noanswer" "text:Never asked.") ;;
	*)
		echo "record-transcripts: unknown scenario $name" >&2
		exit 2 ;;
	esac
}

record() {
	local name=$1 session steps=() env=() args=() limit=120 plant="" prompt="Run the scripted steps."
	scenario "$name"
	local run=$tmp/$name home=$tmp/$name/home
	local work=$home/project
	mkdir -p "$work"
	"$tmp/fakeapi" "${steps[@]}" >"$run/url" 2>"$run/api.log" &
	api_pid=$!
	for _ in $(seq 100); do
		[[ -s $run/url ]] && break
		sleep 0.1
	done
	local url
	url=$(head -1 "$run/url")
	if [[ -n $plant ]]; then eval "$plant"; fi
	printf '%s\n' "$prompt" >"$run/prompt"
	local start=$SECONDS code=0
	(cd "$work" && env -i PATH="$PATH" HOME="$home" ANTHROPIC_BASE_URL="$url" ANTHROPIC_API_KEY=sk-ant-record-dummy \
		CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 "${env[@]}" \
		timeout "$limit" "$claude" -p --output-format stream-json --verbose --allowedTools Bash "${args[@]}" \
		--session-id "$session" <"$run/prompt" >"$run/stdout" 2>"$run/stderr") || code=$?
	local took=$((SECONDS - start))
	kill "$api_pid" 2>/dev/null || true
	wait "$api_pid" 2>/dev/null || true
	api_pid=""
	local how="exited by itself after ${took}s"
	if [[ $code == 124 ]]; then how="killed by timeout(1) after ${limit}s"; fi
	echo "# exit code $code; $how" >>"$run/stderr"
	local encoded=${work//[^a-zA-Z0-9]/-}
	for f in stdout stderr; do
		sed -e "s|$encoded|-home-user-project|g" -e "s|$home|/home/user|g" \
			-e 's|/tmp/cc-socks/[0-9]*\.sock|/tmp/cc-socks/PID.sock|g' "$run/$f" >"$run/$f.norm"
	done
	mv "$run/stdout.norm" "$out/$name.jsonl"
	mv "$run/stderr.norm" "$out/$name.stderr"
	echo "$name: exit $code after ${took}s, $(wc -l <"$out/$name.jsonl") lines -> $out/$name.jsonl"
	if grep -q "script exhausted" "$run/api.log"; then
		echo "  warning: the CLI asked for more than the script held:" >&2
		sed 's/^/  /' "$run/api.log" >&2
	fi
}

if [[ $# -eq 0 ]]; then
	set -- text-success tool-use-success sleep-blocked background-task background-task-deadline \
		background-ignores-ceiling monitor-ceiling startup-config-invalid startup-proxy-invalid startup-bypass-root \
		startup-tmpdir-unusable prompt-slash-clear no-response no-response-twice
fi
for name in "$@"; do
	(scenario "$name") || exit 2 # a typo fails before anything is recorded
done
go build -o "$tmp/fakeapi" ./cmd/fakeapi
mkdir -p "$out"
echo "recording with claude $version into $out/"
for name in "$@"; do
	record "$name"
done
