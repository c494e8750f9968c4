#!/usr/bin/env bash
# Measures what each of the tool's three speed-ups buys on the size it is
# for, a 10,000-issue queue (about 7 MiB), by running the tool with and
# without it side by side:
#
#   huge pages     the default build against one built -tags nohugepages
#                  (prepareHeap in cmd/orchestrator/heap_linux.go)
#   GC off         the nohugepages build against the same with GOGC=100 in
#                  the environment, which keeps the collector's default
#                  (tuneGC in cmd/orchestrator/main.go)
#   two halves     the scan of the queue in two halves at once against the
#                  one-pass scan, in process: BenchmarkScanQueue10k
#                  (scanSplit in issuequeue/scan.go)
#   noise          the default build against itself
#
# lint, check and status run as whole processes, as cron runs them; every
# run of every variant follows a reset of the state directory (as in
# bench/queue.sh), and the variants take turns, their order rotating from
# round to round, so that each round is a pair taken within a second. A
# speed-up's figure is the median over the rounds of its paired ratio, the
# time without it over the time with it, with the middle half of those
# ratios beside it; the noise line is what the same binary measures
# against itself. The benchmark binary of the scan is run SCANS times,
# each run a pair.
#
# Needs Go, bash 5 ($EPOCHREALTIME), awk and coreutils. Prints figures,
# sets no bar; exits 2 if the setup fails.
#
# Usage: bench/tuning.sh       RUNS=61 SCANS=21 bench/tuning.sh
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${RUNS:-31}
scans=${SCANS:-11}
if [ -z "${EPOCHREALTIME:-}" ]; then
	echo "bench/tuning.sh: needs bash 5 (\$EPOCHREALTIME)" >&2
	exit 2
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/orchestrator-tuning-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export NO_COLOR=1

echo "uptime before: $(uptime | sed 's/^ *//')"
. bench/lib.sh
build_orchestrator "$tmp/on" || exit 2
cp "$tmp/on" "$tmp/on2"
GOFLAGS=-tags=nohugepages build_orchestrator "$tmp/nohuge" || exit 2
go build -o "$tmp/genqueue" ./bench/genqueue || exit 2
go test -c -o "$tmp/issuequeue.test" ./issuequeue || exit 2

d=$tmp/q10000
"$tmp/on" init --dir "$d" >/dev/null || exit 2
"$tmp/genqueue" -n 10000 -dir "$d" || exit 2
cp "$d/issue_queue.md" "$tmp/queue.md"
cp "$d/session_state.md" "$tmp/state.md"
touch -d "@$(($(date +%s) - 60))" "$tmp/queue.md" "$tmp/state.md"
reset() {
	cp -p "$tmp/queue.md" "$d/issue_queue.md"
	cp -p "$tmp/state.md" "$d/session_state.md"
	sync "$d/issue_queue.md" "$d/session_state.md"
	rm -rf "$d/logs"
}

# The variants: label, environment, binary.
variants=("on::$tmp/on" "on2::$tmp/on2" "nohuge::$tmp/nohuge" "gcon:GOGC=100:$tmp/nohuge")
k=${#variants[@]}
for c in lint check status; do
	for r in $(seq $((runs + 1))); do
		for i in $(seq 0 $((k - 1))); do
			IFS=: read -r label envs bin <<<"${variants[$(((i + r) % k))]}"
			reset
			t0=${EPOCHREALTIME//[!0-9]/}
			# shellcheck disable=SC2086 # envs is empty or one NAME=value
			env $envs "$bin" --dir "$d" "$c" >/dev/null 2>&1 || {
				echo "bench/tuning.sh: $label $c failed" >&2
				exit 2
			}
			t1=${EPOCHREALTIME//[!0-9]/}
			if [ "$r" -gt 1 ]; then # the first round warms up
				echo "$r $label $((t1 - t0))" >>"$tmp/$c.times"
			fi
		done
	done
done

# stats: reads numbers, prints their median and the middle half's range.
stats() {
	sort -g | awk '{ v[NR] = $1 } END {
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.3f %.3f-%.3f\n", m, v[int(NR / 4) + 1], v[int(3 * NR / 4)] }'
}
# paired FILE A B: the ratios of B's time to A's, round by round.
paired() { awk -v a="$2" -v b="$3" '$2 == a { x[$1] = $3 } $2 == b { y[$1] = $3 } END { for (r in x) if (r in y) print y[r] / x[r] }' "$1"; }
median() { awk -v l="$2" '$2 == l { print $3 / 1000 }' "$1" | stats | cut -d' ' -f1; }

echo
echo "10,000 issues, $(wc -c <"$tmp/queue.md") bytes; $runs rounds, the variants taking turns"
echo "ratio: median over the rounds of (time without) / (time with), middle half in brackets"
echo
printf '%-8s %10s %10s %10s %10s   %-22s %-22s %s\n' command 'on ms' 'nohuge ms' 'gc on ms' 'on2 ms' \
	'huge pages' 'GC off' 'noise (on2 / on)'
for c in lint check status; do
	f=$tmp/$c.times
	read -r h hr < <(paired "$f" on nohuge | stats)
	read -r g gr < <(paired "$f" nohuge gcon | stats)
	read -r n nr < <(paired "$f" on on2 | stats)
	printf '%-8s %10.2f %10.2f %10.2f %10.2f   %-22s %-22s %s\n' "$c" \
		"$(median "$f" on)" "$(median "$f" nohuge)" "$(median "$f" gcon)" "$(median "$f" on2)" \
		"${h}x [$hr]" "${g}x [$gr]" "${n}x [$nr]"
done

echo
echo "two halves: scan of a 10,000-issue queue in process, $scans runs of BenchmarkScanQueue10k"
for _ in $(seq "$scans"); do
	(cd issuequeue && "$tmp/issuequeue.test" -test.run '^$' -test.bench ScanQueue10k -test.benchtime 20x) |
		awk '/ScanQueue10k\/onepass/ { a = $3 } /ScanQueue10k\/split/ { b = $3 } END { print a / 1e6, b / 1e6, a / b }'
done >"$tmp/scan.times"
printf '%-8s %10s %10s   %s\n' '' 'split ms' 'onepass ms' 'two halves (onepass / split)'
printf '%-8s %10.2f %10.2f   %s\n' scan "$(cut -d' ' -f2 "$tmp/scan.times" | stats | cut -d' ' -f1)" \
	"$(cut -d' ' -f1 "$tmp/scan.times" | stats | cut -d' ' -f1)" \
	"$(cut -d' ' -f3 "$tmp/scan.times" | stats | awk '{ printf "%sx [%s]", $1, $2 }')"
echo
echo "uptime after: $(uptime | sed 's/^ *//')"
