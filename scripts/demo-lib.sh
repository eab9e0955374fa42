# Sourced by scripts/demo.sh, scripts/demo-fleet.sh and scripts/try.sh
# (bash): what they do around their run. demo_folder makes the temporary
# folder ($tmp, with home/ and work/), removed at exit unless DEMO_KEEP=1
# (make ... KEEP=1); demo_api starts the fake API ($fakeapi) with the
# arguments given and sets $url; demo_env is the environment the run gets;
# demo_run prints a command and runs exactly what it printed; bar prints a
# step's banner.

demo_folder() {
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
	api_pid=
	trap demo_cleanup EXIT
	trap 'exit 130' INT TERM
	mkdir -p "$tmp/home" "$tmp/work"
}

demo_cleanup() {
	[ -n "$api_pid" ] && kill "$api_pid" 2>/dev/null && wait "$api_pid" 2>/dev/null
	[ "${DEMO_KEEP:-}" = 1 ] || rm -rf "$tmp"
}

demo_api() {
	"$fakeapi" "$@" >"$tmp/api.url" 2>"$tmp/api.log" &
	api_pid=$!
	for _ in $(seq 100); do [ -s "$tmp/api.url" ] && break; sleep 0.1; done
	url=$(head -1 "$tmp/api.url")
	if [ -z "$url" ]; then
		echo "the fake API did not start:" >&2
		cat "$tmp/api.log" >&2
		exit 1
	fi
}

# q is its argument quoted for a shell (printf %q): a path with a space
# or a quote copies as one word.
q() { printf '%q' "$1"; }

# demo_env is the environment of the run, as words for a command line:
# nothing of the user's but PATH and TERM (env -i: no key of theirs, no
# CLAUDE_CONFIG_DIR, no cloud provider), a HOME of the demo's own (the
# CLI writes its ~/.claude there, never in the user's), the fake API's
# URL and a key it ignores, and the CLI's update checks and other traffic
# off. PATH stays "$PATH": the shell the command is copied into has one.
demo_env() {
	printf '%s' "env -i PATH=\"\$PATH\" TERM=$(q "${TERM:-dumb}") HOME=$(q "$tmp/home") \\
    ANTHROPIC_BASE_URL=$(q "$url") ANTHROPIC_API_KEY=fake-key-not-used \\
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1"
}

# demo_run prints the command line $1 in a banner, then runs it with bash,
# so that what is shown is what ran, to the character; $code is its exit
# code.
demo_run() {
	bar "$1"
	set +e
	bash -c "$1"
	code=$?
	set -e
}

bar() {
	if [ -t 1 ]; then printf '\n\033[1m== %s\033[0m\n\n' "$*"; else printf '\n== %s\n\n' "$*"; fi
}
