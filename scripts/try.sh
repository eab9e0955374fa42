#!/usr/bin/env bash
# make try PROMPT=task.md: malarun on a task of your own, with no key and
# nothing of yours touched. The pinned real claude runs against the
# project's fake API (cmd/fakeapi -follow-prompt), whose fake model does
# not understand the task: it runs each ```sh block of the prompt as a
# Bash call, one per turn, then says what ran (a prompt without one gets a
# look at the folder). It is not Claude. The run has a HOME of its own
# (the CLI writes its ~/.claude there), nothing of the user's environment
# but PATH and TERM, short timeouts, and a state folder that is kept: the
# commands to look at it are printed, each working as it is in a fresh
# shell.
#
# Arguments: malarun, fakeapi, claude, the prompt file. From make:
# TRY_FAULT=stall (the API stalls mid-answer once: malarun resumes),
# TRY_WORKDIR (the folder claude works in; default an empty one of its
# own), TRY_ISSUE (default try-1), and any MALARUN_* timeout, which
# replaces the short one set here.
set -euo pipefail
malarun=$1 fakeapi=$2 claude=$3 prompt=${4:-}
root=$(cd "$(dirname "$0")/.." && pwd)

if [ -z "$prompt" ]; then
	echo "try: no prompt: make try PROMPT=task.md (a file with your task; README.md, 'Try it on your own task')" >&2
	exit 2
fi
if [ ! -f "$prompt" ] || [ ! -r "$prompt" ]; then
	echo "try: PROMPT=$prompt is not a file that can be read" >&2
	exit 2
fi
prompt=$(cd "$(dirname "$prompt")" && pwd)/$(basename "$prompt")
issue=${TRY_ISSUE:-try-1}
case ${TRY_FAULT:-} in
'' | none) fault=() ;;
stall) fault=(-stall-once 1) ;; # after the first command: malarun resumes the session
*)
	echo "try: FAULT=$TRY_FAULT: want stall (the API stalls mid-answer once), or nothing" >&2
	exit 2 ;;
esac
if [ -n "${TRY_WORKDIR:-}" ] && [ ! -d "$TRY_WORKDIR" ]; then
	echo "try: WORKDIR=$TRY_WORKDIR is not a folder" >&2
	exit 2
fi

. "$(dirname "$0")/demo-lib.sh"
DEMO_KEEP=1 # the run's state is what the user came for
demo_folder malarun-try
work=$tmp/work
[ -z "${TRY_WORKDIR:-}" ] || work=$(cd "$TRY_WORKDIR" && pwd)
demo_api -follow-prompt ${fault[@]+"${fault[@]}"}

# Short timeouts: the fake API answers at once, so a minute of silence is
# a hang here. A MALARUN_* variable of the caller's replaces its default:
# MALARUN_TOOL_TIMEOUT=20s shows a hung command (a ```sh block with
# `sleep 300`) killed and resumed within the minute.
timeouts=
for kv in IDLE_TIMEOUT=20s TEXT_TIMEOUT=15s THINKING_TIMEOUT=20s TOOL_INPUT_TIMEOUT=20s TOOL_TIMEOUT=2m \
	KILL_GRACE=3s MAX_ATTEMPTS=4 SESSION_TIMEOUT=10m; do
	name=MALARUN_${kv%%=*}
	value=${!name:-${kv#*=}}
	timeouts="$timeouts $name=$(q "$value")"
done

echo "malarun on your task: the real claude $("$claude" --version 2>/dev/null | cut -d' ' -f1), against the project's fake API on $url."
echo "The fake API's model is not Claude and does not read your task: it runs each \`\`\`sh block of"
echo "your prompt as a Bash call, in $work, then says what ran."
echo "This is the command that runs (it works copied while the fake API runs):"
demo_run "cd $(q "$tmp") && $(demo_env) \\
   $timeouts \\
    $(q "$malarun") $(q "$issue") --prompt $(q "$prompt") --state-dir $(q "$tmp/state") \\
    --claude-bin $(q "$claude") --cwd $(q "$work") -- --allowedTools Bash"
outcome=$("$malarun" exit-codes --json | tr -d '\n' | sed -n "s/.*\"code\": *$code, *\"outcome\": *\"\([a-z_]*\)\".*/\1/p")
bar "exit code $code (${outcome:-unknown}); malarun show $issue: the story of the run"
"$malarun" show "$issue" --state-dir "$tmp/state" --no-pager || true
"$malarun" show "$issue" --state-dir "$tmp/state" --format html >"$tmp/show.html" 2>/dev/null || true

s=$(q "$tmp/state")
m=$(q "$malarun")
bar "Look again (each line works as it is, in any shell)"
echo "  $m show $(q "$issue") --state-dir $s"
echo "  $m show $(q "$issue") --state-dir $s --format html > $(q "$tmp/show.html")"
echo "  $m status $(q "$issue") --state-dir $s"
echo "  $m summary --state-dir $s"
echo "  ls $(q "$tmp/state/$issue/runs")/*/"
echo
echo "The page of the run: $tmp/show.html (open it in a browser). The fake API's log: $tmp/api.log."
echo "All of it is kept in $tmp (rm -rf $(q "$tmp") removes it). Again, with a fault or a short tool timeout:"
echo "  make -C $(q "$root") try PROMPT=$(q "$prompt") FAULT=stall"
echo "  MALARUN_TOOL_TIMEOUT=20s make -C $(q "$root") try PROMPT=$(q "$prompt")"
exit "$code"
