#!/usr/bin/env bash
# Measures "orchestrator signature" against coreutils' sha256sum on the same
# 256 MiB of realistic test output, side by side in one run:
#
#   normalized signature  at least as fast as sha256sum   (ratio >= 1.0)
#   --raw                 at least 3 times as fast         (ratio >= 3.0)
#   peak RSS              under 32 MiB for both
#
# The ratio is sha256sum's wall time divided by ours. Each command runs
# RUNS times (default 5), interleaved, and the fastest run counts; peak RSS
# is the largest seen. The data is generated once, deterministically, under
# bench/out/ (ignored by git). Exits 1 if a bar is missed.
#
# Usage: bench/signature.sh            SIZE=67108864 RUNS=5 bench/signature.sh
set -euo pipefail
cd "$(dirname "$0")/.."

size=${SIZE:-268435456}
runs=${RUNS:-5}
out=bench/out
data=$out/test-output-$size.txt
bin=$out/orchestrator

if [ ! -x /usr/bin/time ]; then
	echo "bench/signature.sh: /usr/bin/time is missing; it measures peak memory." >&2
	echo "Install it with: apt-get install time   (macOS: brew install gnu-time, then edit this script to use gtime)" >&2
	exit 2
fi
command -v sha256sum >/dev/null || { echo "bench/signature.sh: sha256sum (coreutils) is missing" >&2; exit 2; }

mkdir -p "$out"
if [ ! -s "$data" ]; then
	echo "generating $data ..."
	go run ./signature/internal/testoutput/gentestoutput -size "$size" "$data"
fi
go build -o "$bin" ./cmd/orchestrator
bytes=$(stat -c %s "$data")
cat "$data" >/dev/null # into the page cache, so that every command reads from memory

# run LABEL CMD...: runs CMD once under /usr/bin/time -v; records the wall
# time in nanoseconds (best so far) and the peak RSS in KiB (largest so far),
# and keeps its standard output in $out/LABEL.stdout.
declare -A best rss
run() {
	local label=$1
	shift
	local t0 t1 ns kib
	t0=$(date +%s%N)
	/usr/bin/time -v "$@" >"$out/$label.stdout" 2>"$out/$label.time"
	t1=$(date +%s%N)
	ns=$((t1 - t0))
	kib=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$out/$label.time")
	if [ -z "${best[$label]:-}" ] || [ "$ns" -lt "${best[$label]}" ]; then best[$label]=$ns; fi
	if [ -z "${rss[$label]:-}" ] || [ "$kib" -gt "${rss[$label]}" ]; then rss[$label]=$kib; fi
}

for _ in $(seq "$runs"); do
	run sha256sum sha256sum "$data"
	run normalized "$bin" signature "$data"
	run raw "$bin" signature --raw "$data"
done

# The raw signature must be sha256sum's hash.
if [ "$(cut -d' ' -f1 "$out/sha256sum.stdout")" != "$(cat "$out/raw.stdout")" ]; then
	echo "FAIL: --raw printed $(cat "$out/raw.stdout"), sha256sum printed $(cut -d' ' -f1 "$out/sha256sum.stdout")" >&2
	exit 1
fi

echo
printf 'input: %s, %d bytes (%.0f MiB); best of %d runs each\n\n' "$data" "$bytes" "$(echo "$bytes / 1048576" | bc -l)" "$runs"
printf '%-38s %10s %10s %12s %12s\n' command wall MB/s 'vs sha256sum' 'peak RSS'
fail=0
for label in sha256sum normalized raw; do
	ns=${best[$label]}
	case $label in
	sha256sum) cmd="sha256sum FILE" ;;
	normalized) cmd="orchestrator signature FILE" ;;
	raw) cmd="orchestrator signature --raw FILE" ;;
	esac
	ratio=$(echo "${best[sha256sum]} / $ns" | bc -l)
	printf '%-38s %9.3fs %10.0f %11.2fx %9.1f MiB\n' "$cmd" "$(echo "$ns / 1000000000" | bc -l)" \
		"$(echo "$bytes * 1000 / $ns" | bc -l)" "$ratio" "$(echo "${rss[$label]} / 1024" | bc -l)"
done
echo

check() { # check DESCRIPTION CONDITION(bc)
	if [ "$(echo "$2" | bc -l)" = 1 ]; then echo "ok    $1"; else echo "MISS  $1"; fail=1; fi
}
check "normalized at least as fast as sha256sum" "${best[sha256sum]} / ${best[normalized]} >= 1.0"
check "raw at least 3x as fast as sha256sum" "${best[sha256sum]} / ${best[raw]} >= 3.0"
check "normalized peak RSS under 32 MiB" "${rss[normalized]} < 32768"
check "raw peak RSS under 32 MiB" "${rss[raw]} < 32768"
exit $fail
