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

echo "The real claude $("$claude" --version 2>/dev/null | cut -d' ' -f1) against the project's fake API on $url, which stalls"
echo "mid-answer once. This is the command that runs (it works copied while the fake API runs):"
demo_run "cd $(q "$tmp/work") && $(demo_env) \\
    $(q "$malarun") demo-1 --prompt $(q "$tmp/task.md") --state-dir $(q "$tmp/state") \\
    --claude-bin $(q "$claude") --idle-timeout $idle --log-format console -- --allowedTools Bash"
bar "exit code $code ($("$malarun" exit-codes --json | tr -d '\n' | sed -n "s/.*\"code\": *$code, *\"outcome\": *\"\([a-z_]*\)\".*/\1/p"))"
bar "malarun show demo-1: the story of the run"
"$malarun" show demo-1 --state-dir "$tmp/state" --no-pager
echo
if [ "${DEMO_KEEP:-}" = 1 ]; then
	echo "Kept in $tmp. Look again with:"
	echo "  $(q "$malarun") show demo-1 --state-dir $(q "$tmp/state")"
	echo "  $(q "$malarun") status --state-dir $(q "$tmp/state")"
	echo "  ls $(q "$tmp/state")/demo-1/runs/*/"
else
	echo "Everything above lived in $tmp, removed now (make demo KEEP=1 keeps it)."
fi
echo "Next: make try PROMPT=your-task.md (your own task, no key), make demo-fleet (a fleet), then README.md, 'Run'."
exit "$code"
