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
# otherwise, with a line per prompt file. A file whose name is not an
# issue id (letters, digits, . _ -, not starting with -) gets a line
# saying so and runs nothing; the others run. Names are passed NUL
# separated, so a quote, a backslash, a space or a newline in one stops
# nothing. A file that could not run (such a name, or a malarun that
# exited 2: a configuration error, which leaves no record) is noted in
# state_dir/not-run/ with `malarun not-run`, so that the morning's
# `malarun summary` names it among what a person must act on; the notes
# of PROMPTS_DIR are cleared as a fleet starts (docs/many-issues.md).
set -u

# shown is a file name safe to print on one line: anything but letters,
# digits and . _ - becomes ?.
shown() {
	printf '%s' "$1" | tr -c 'A-Za-z0-9._-' '?'
}

# note PROMPT WHY [ARGS...] notes a prompt file that could not run where
# malarun summary reads it (the state_dir the runs' own arguments name);
# a note that cannot be made is said, and stops nothing.
note() {
	prompt=$1 why=$2
	shift 2
	"${MALARUN:-malarun}" not-run --prompt "$prompt" --why "$why" "$@" >/dev/null ||
		echo "$(shown "${prompt##*/}"): could not be noted for malarun summary" >&2
}

if [ "${1:-}" = --one ]; then
	# One issue, run until it ends for good (called by xargs below).
	shift
	prompt=$1
	shift
	name=${prompt##*/}
	issue=${name%.md}
	case $issue in
	'' | . | .. | -* | *[!A-Za-z0-9._-]*)
		why="not an issue id (letters, digits, . _ -; not starting with -): not run"
		echo "$(shown "$name"): $why"
		note "$prompt" "$why" "$@"
		exit 1 ;;
	esac
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
		2)
			# A configuration error (or a prompt change refused): malarun
			# wrote no record, so the note is the summary's only trace.
			echo "$issue: not run, exit 2 (see $out/$issue.log)"
			note "$prompt" "$(tail -n 1 "$out/$issue.log" | cut -c1-500)" --exit-code 2 "$@"
			exit 1 ;;
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
# What an earlier fleet of this folder could not run is for it to say again.
"${MALARUN:-malarun}" not-run --clear "$dir" "$@" ||
	echo "the notes of $(shown "$dir") could not be cleared: malarun summary may name files fixed since" >&2
# xargs exits 123 when any issue failed; the lines above say which.
find "$dir" -maxdepth 1 -name '*.md' -print0 | sort -z |
	xargs -0 -P "$jobs" -I {} sh "$0" --one {} "$@"
[ $? -eq 0 ]
