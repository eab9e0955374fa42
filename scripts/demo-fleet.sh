#!/usr/bin/env bash
# make demo-fleet: the laptop fleet recipe (deploy/xargs/malarun-fleet.sh)
# with no key: six issues, three at a time, the pinned real CLI against the
# project's fake API (cmd/fakeapi), which stalls one answer and rate-limits
# nothing. Then `malarun summary` tells what the fleet did. Everything lives
# in a temporary folder, removed at the end (DEMO_KEEP=1, make demo-fleet
# KEEP=1: kept).
set -euo pipefail
malarun=$1 fakeapi=$2 claude=$3
root=$(cd "$(dirname "$0")/.." && pwd)
idle=${DEMO_IDLE_TIMEOUT:-8s}

. "$(dirname "$0")/demo-lib.sh"
demo_folder malarun-demo-fleet
mkdir -p "$tmp/prompts"
for i in 1 2 3 4 5 6; do
	echo "Count the files in this folder for issue $i, then say you are done." >"$tmp/prompts/issue-$i.md"
done

# One API for the fleet, its steps taken by whichever request comes next:
# a stall (one issue's answer stops mid-way: malarun resumes it), a Bash
# call, then a short answer for every request after.
demo_api stall 'bash:ls | wc -l' '0*text:Done.'

bar "deploy/xargs/malarun-fleet.sh prompts/ 3 -- --idle-timeout $idle -- --allowedTools Bash"
echo "(six issues, the real claude $("$claude" --version 2>/dev/null | cut -d' ' -f1), a fake API on $url)"
echo
set +e
(cd "$tmp/work" && HOME="$tmp/home" ANTHROPIC_BASE_URL="$url" ANTHROPIC_API_KEY=demo-key-not-used \
	CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 \
	MALARUN="$malarun" MALARUN_FLEET_OUT="$tmp/fleet-out" MALARUN_STATE_DIR="$tmp/state" \
	"$root/deploy/xargs/malarun-fleet.sh" "$tmp/prompts" 3 -- --claude-bin "$claude" \
	--idle-timeout "$idle" -- --allowedTools Bash)
code=$?
set -e
bar "malarun summary: the fleet at a glance"
"$malarun" summary --state-dir "$tmp/state"
if [ "${DEMO_KEEP:-}" = 1 ]; then
	"$malarun" summary --state-dir "$tmp/state" --format html --out "$tmp/summary" >/dev/null
	echo "Kept in $tmp. Look again with:"
	echo "  $malarun summary --state-dir $tmp/state"
	echo "  $malarun show issue-1 --state-dir $tmp/state"
	echo "  open $tmp/summary/index.html in a browser"
else
	echo "Everything above lived in $tmp, removed now (make demo-fleet KEEP=1 keeps it)."
fi
exit "$code"
