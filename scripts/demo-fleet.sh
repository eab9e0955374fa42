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

echo "Six issues, three at a time, the real claude $("$claude" --version 2>/dev/null | cut -d' ' -f1), against the project's"
echo "fake API on $url. This is the command that runs (it works copied while the fake API runs):"
demo_run "cd $(q "$tmp/work") && $(demo_env) \\
    MALARUN=$(q "$malarun") MALARUN_FLEET_OUT=$(q "$tmp/fleet-out") MALARUN_STATE_DIR=$(q "$tmp/state") \\
    $(q "$root/deploy/xargs/malarun-fleet.sh") $(q "$tmp/prompts") 3 -- \\
    --claude-bin $(q "$claude") --idle-timeout $idle -- --allowedTools Bash"
bar "malarun summary: the fleet at a glance"
"$malarun" summary --state-dir "$tmp/state"
if [ "${DEMO_KEEP:-}" = 1 ]; then
	"$malarun" summary --state-dir "$tmp/state" --format html --out "$tmp/summary" >/dev/null
	echo "Kept in $tmp. Look again with:"
	echo "  $(q "$malarun") summary --state-dir $(q "$tmp/state")"
	echo "  $(q "$malarun") show issue-1 --state-dir $(q "$tmp/state")"
	echo "and open the page $tmp/summary/index.html in a browser."
else
	echo "Everything above lived in $tmp, removed now (make demo-fleet KEEP=1 keeps it)."
fi
exit "$code"
