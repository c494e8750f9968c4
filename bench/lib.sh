# Sourced by the benchmark scripts in this folder, from the repository's top.
#
# build_orchestrator DEST [DIR]: builds the tool from DIR (default: here)
# into DEST as scripts/release.sh builds the release binaries, and as
# docs/deploy.md recommends installing it: without cgo (a static binary,
# which starts about 3 ms sooner than one linked against the C library),
# trimmed paths, no symbol table. The benchmarks measure what runs in cron.
build_orchestrator() {
	(cd "${2:-.}" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$1" ./cmd/orchestrator)
}
#
# bench_start NAME: the start they share. Checks for GNU time at
# /usr/bin/time (sets gnutime), makes the scratch folder $tmp (removed on
# exit), turns colour off, prints the machine's load and builds the tool
# into $tmp/orchestrator. Exits 2 if any of it fails.
bench_start() {
	gnutime=/usr/bin/time
	if ! "$gnutime" -f %M true >/dev/null 2>&1; then
		echo "bench/$1.sh: needs GNU time at /usr/bin/time (apt-get install time)" >&2
		exit 2
	fi
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/orchestrator-$1-bench.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	export NO_COLOR=1

	echo "uptime before: $(uptime | sed 's/^ *//')"
	build_orchestrator "$tmp/orchestrator" || exit 2
}
