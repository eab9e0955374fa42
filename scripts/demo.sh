#!/usr/bin/env bash
# make demo: a real rescue in under a minute, with nothing but a clone.
# The project's fake Anthropic API (cmd/fakeapi) and the pinned real CLI:
# the agent runs a command, then the API stalls in the middle of its next
# answer; malarun sees the silence, kills the CLI's process tree, resumes
# the same session, and the task finishes. Then `malarun show` tells the
# story. Everything lives in a temporary folder that is removed at the end
# (DEMO_KEEP=1, make demo KEEP=1: kept, and the commands to look at it
# printed).
set -euo pipefail
malarun=$1 fakeapi=$2 claude=$3
idle=${DEMO_IDLE_TIMEOUT:-8s}

. "$(dirname "$0")/demo-lib.sh"
demo_folder malarun-demo
cat >"$tmp/task.md" <<'TASK'
Count the files in this folder, then say you are done.
TASK

# The API's script: a Bash call, then a stall mid-answer, then the answer
# the resumed session gets.
demo_api 'bash:ls | wc -l' stall 'text:Done: the folder is counted.'

bar "malarun demo-1 --prompt task.md --idle-timeout $idle -- --allowedTools Bash"
echo "(the real claude $("$claude" --version 2>/dev/null | cut -d' ' -f1), a fake API on $url that stalls mid-answer once)"
echo
set +e
(cd "$tmp/work" && HOME="$tmp/home" ANTHROPIC_BASE_URL="$url" ANTHROPIC_API_KEY=demo-key-not-used \
	CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 \
	"$malarun" demo-1 --prompt "$tmp/task.md" --state-dir "$tmp/state" --claude-bin "$claude" \
	--idle-timeout "$idle" --log-format console -- --allowedTools Bash)
code=$?
set -e
bar "exit code $code ($("$malarun" exit-codes --json | tr -d '\n' | sed -n "s/.*\"code\": *$code, *\"outcome\": *\"\([a-z_]*\)\".*/\1/p"))"
bar "malarun show demo-1: the story of the run"
"$malarun" show demo-1 --state-dir "$tmp/state" --no-pager
echo
if [ "${DEMO_KEEP:-}" = 1 ]; then
	echo "Kept in $tmp. Look again with:"
	echo "  $malarun show demo-1 --state-dir $tmp/state"
	echo "  $malarun status --state-dir $tmp/state"
	echo "  ls $tmp/state/demo-1/runs/*/"
else
	echo "Everything above lived in $tmp, removed now (make demo KEEP=1 keeps it)."
fi
echo "Next: make demo-fleet (a fleet, no key), then README.md, 'Run'."
exit "$code"
