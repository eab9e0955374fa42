# Sourced by scripts/demo.sh and scripts/demo-fleet.sh (bash): what both
# demos do around their run. demo_folder makes the temporary folder ($tmp,
# with home/ and work/), removed at exit unless DEMO_KEEP=1 (make ...
# KEEP=1); demo_api starts the fake API ($fakeapi) with the steps given and
# sets $url; bar prints a step's banner.

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
	for _ in $(seq 50); do [ -s "$tmp/api.url" ] && break; sleep 0.1; done
	url=$(head -1 "$tmp/api.url")
}

bar() {
	if [ -t 1 ]; then printf '\n\033[1m== %s\033[0m\n\n' "$*"; else printf '\n== %s\n\n' "$*"; fi
}
