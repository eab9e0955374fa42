#!/bin/sh
# Runs many issues on one machine, C at a time, with xargs -P (every Linux
# and macOS has it): one issue per prompt file, its id the file's name
# without .md. malarun's exit code steers what happens next, as
# `malarun exit-codes` says:
#   0                          done;
#   75 (retry after retry_at)  run again with --limit-wait, so that malarun
#                              sleeps until the usage limit resets and resumes;
#   3 124 129 130 131 143      (retry now) run again at once: it resumes the
#                              session, up to MALARUN_FLEET_TRIES runs in all;
#   anything else (never)      stop that issue; the others go on.
#
#   deploy/xargs/malarun-fleet.sh prompts/ 4 -- --config malarun.yaml
#
# The arguments after -- go to every malarun ($MALARUN, default the one on
# PATH). Each issue's --json report and log are in $MALARUN_FLEET_OUT
# (default ./fleet-out). It exits 0 when every issue succeeded, 1
# otherwise, with a line per issue. Prompt file names are issue ids (no
# spaces or newlines).
set -u

if [ "${1:-}" = --one ]; then
	# One issue, run until it ends for good (called by xargs below).
	shift
	prompt=$1
	shift
	issue=$(basename "$prompt" .md)
	out=${MALARUN_FLEET_OUT:-fleet-out}
	tries=0
	wait=
	while :; do
		tries=$((tries + 1))
		"${MALARUN:-malarun}" "$issue" --prompt "$prompt" --json $wait "$@" >"$out/$issue.json" 2>>"$out/$issue.log"
		code=$?
		case $code in
		0)
			echo "$issue: succeeded (run $tries)"
			exit 0 ;;
		75)
			wait="--limit-wait ${MALARUN_FLEET_LIMIT_WAIT:-12h}" ;;
		3 | 124 | 129 | 130 | 131 | 143)
			wait= ;;
		*)
			echo "$issue: stopped, exit $code (see $out/$issue.log)"
			exit 1 ;;
		esac
		if [ "$tries" -ge "${MALARUN_FLEET_TRIES:-5}" ]; then
			echo "$issue: still exit $code after $tries runs (see $out/$issue.log)"
			exit 1
		fi
	done
fi

if [ $# -lt 2 ]; then
	echo "usage: $0 PROMPTS_DIR CONCURRENCY [-- MALARUN_ARGS...]" >&2
	exit 2
fi
dir=$1
jobs=$2
shift 2
[ "${1:-}" = -- ] && shift
mkdir -p "${MALARUN_FLEET_OUT:-fleet-out}" || exit 2
# xargs exits 123 when any issue failed; the lines above say which.
find "$dir" -maxdepth 1 -name '*.md' -print | sort |
	xargs -P "$jobs" -I {} sh "$0" --one {} "$@"
[ $? -eq 0 ]
