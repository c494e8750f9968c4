#!/usr/bin/env bash
# Measures what a run and the report cost on an installation's first day,
# after a year and after two years of cron every 10 minutes, side by side in
# one run:
#
#   run (the second one, a trivial loop, metrics textfile on)
#       on a year of history          at most 2x the fresh dir + 30 ms
#                                     and at most 48 MiB peak RSS
#   report on a year and on two years at most 64 MiB peak RSS
#   report: two years / one year      at most 2.2x the time
#
# The state directories come from bench/genhistory: 52,560 runs a year, three
# loops each (history.csv as one file, as an installation that predates
# rotation has it, so the first run also migrates it), the 30 days of
# logs/retry.jsonl that retention keeps, and a small queue. The fresh dir is
# 'orchestrator init' with the same config.toml. Every command runs as a
# whole process, as cron runs it: the figure is the median wall time of RUNS
# runs (default 5) after one untimed run, and the highest peak RSS (GNU time's
# %M). The untimed first run of 'run' is the one that migrates history.csv,
# counts the metrics' running totals and prunes the logs; it is shown too.
#
# With PRUNE=1, also the first run on a year of history whose event log was
# never pruned (a year of logs/retry.jsonl): what the first prune costs.
# The machine's load shows in wall times; the CPU time (user + system) of
# each figure is printed beside it.
# BASE=PATH measures another build of the tool the same way, for a before and
# after (e.g. BASE=/tmp/orchestrator-old bench/history.sh).
#
# Needs Go, bash 4 or later, GNU time (/usr/bin/time) and coreutils.
# Exits 1 if a bar is missed, 2 if the setup fails.
#
# Usage: bench/history.sh       RUNS=9 bench/history.sh       PRUNE=1 bench/history.sh
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${RUNS:-5}
. bench/lib.sh
bench_start history
go build -o "$tmp/genhistory" ./bench/genhistory || exit 2
bins=(new)
declare -A bin=([new]=$tmp/orchestrator)
if [ -n "${BASE:-}" ]; then
	bins=(base new)
	bin[base]=$BASE
fi

config='[loop]
command = "true"
[budget]
loops_per_day = 0
auto_retry_loops_per_day = 0
agent_time_per_day = "720h"
[metrics]
textfile = "metrics.prom"
'
# make NAME DAYS [LEDGER_DAYS]: a state directory (DAYS 0: a fresh one).
make_dir() {
	local d=$tmp/src-$1
	"${bin[new]}" init --dir "$d" >/dev/null || exit 2
	if [ "$2" -gt 0 ]; then
		"$tmp/genhistory" -dir "$d" -days "$2" -ledger-days "${3:-30}" || exit 2
	fi
	printf '%s' "$config" >"$d/config.toml"
}
make_dir fresh 0
make_dir 1y 365
make_dir 2y 730
if [ "${PRUNE:-}" = 1 ]; then make_dir unpruned 365 365; fi
for n in fresh 1y 2y ${PRUNE:+unpruned}; do
	printf '%-9s history %6s  retry.jsonl %6s\n' "$n" "$(du -sh "$tmp/src-$n"/history*.csv 2>/dev/null | awk '{s=$1} END {print s}')" \
		"$(du -h "$tmp/src-$n/logs/retry.jsonl" 2>/dev/null | cut -f1)"
done

now() {
	if [ -n "${EPOCHREALTIME:-}" ]; then echo "${EPOCHREALTIME/[.,]/}"; else echo $(($(date +%s%N) / 1000)); fi
}
# measure BIN DIR ARGS...: one run; prints "microseconds peakKiB cpuSeconds".
measure() {
	local b=$1 d=$2 t0 t1
	shift 2
	t0=$(now)
	"$gnutime" -f '%M %U %S' -o "$tmp/rss" "$b" --dir "$d" "$@" >/dev/null 2>"$tmp/err" || {
		local rc=$?
		# run exits 1 when nothing is left to do; anything else is a failure.
		if [ $rc -ne 1 ] || [ "$1" != run ]; then
			echo "bench/history.sh: $b --dir $d $* failed ($rc):" >&2
			cat "$tmp/err" >&2
			exit 2
		fi
	}
	t1=$(now)
	echo "$((t1 - t0)) $(tail -1 "$tmp/rss" | awk '{print $1, $2 + $3}')"
}
# series KEY BIN DIR ARGS...: RUNS timed runs; sets wall[KEY] (median, s),
# rss[KEY] (max, MiB) and cpu[KEY] (median user + system, s).
declare -A wall rss cpu first
series() {
	local key=$1 b=$2 d=$3 i
	shift 3
	local ts=() cs=() peak=0 t k c
	for ((i = 0; i < runs; i++)); do
		read -r t k c < <(measure "$b" "$d" "$@")
		ts+=("$t")
		cs+=("$c")
		((k > peak)) && peak=$k
	done
	wall[$key]=$(median "${ts[@]}" | awk '{printf "%.3f", $1/1e6}')
	cpu[$key]=$(median "${cs[@]}" | awk '{printf "%.2f", $1}')
	rss[$key]=$(awk -v k="$peak" 'BEGIN {printf "%.1f", k/1024}')
}
median() {
	printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'
}

for b in "${bins[@]}"; do
	for n in fresh 1y 2y ${PRUNE:+unpruned}; do
		rm -rf "$tmp/$b-$n"
		cp -a "$tmp/src-$n" "$tmp/$b-$n"
	done
	# The first run: migration, the metrics' totals, pruning.
	for n in fresh 1y 2y ${PRUNE:+unpruned}; do
		read -r t k c < <(measure "${bin[$b]}" "$tmp/$b-$n" run --quiet)
		first[$b-$n]=$(awk -v u="$t" -v k="$k" -v c="$c" 'BEGIN {printf "%.2f s (cpu %.2f) %5.1f MiB", u/1e6, c, k/1024}')
	done
	for n in fresh 1y 2y; do
		series "$b-run-$n" "${bin[$b]}" "$tmp/$b-$n" run --quiet
	done
	for n in fresh 1y 2y; do
		series "$b-report-$n" "${bin[$b]}" "$tmp/$b-$n" report --out "$tmp/page.html"
	done
done

echo
echo "wall: median; cpu: median user + system; RSS: highest peak"
printf '%-5s %-21s %29s %29s %29s\n' build command "fresh dir" "1 year" "2 years"
for b in "${bins[@]}"; do
	for c in run report; do
		printf '%-5s %-21s' "$b" "$c$([ $c = run ] && echo ' (second run)')"
		for n in fresh 1y 2y; do printf ' %7s s (cpu %5s) %5s MiB' "${wall[$b-$c-$n]}" "${cpu[$b-$c-$n]}" "${rss[$b-$c-$n]}"; done
		echo
	done
	printf '%-5s %-21s' "$b" "run (first)"
	for n in fresh 1y 2y; do printf ' %29s' "${first[$b-$n]}"; done
	echo
	if [ "${PRUNE:-}" = 1 ]; then
		printf '%-5s %-21s %s\n' "$b" "run (first), unpruned" "${first[$b-unpruned]}"
	fi
done

echo
fail=0
# bar NAME VALUE OP LIMIT: prints the figure against its bar.
bar() {
	local ok
	ok=$(awk -v v="$2" -v l="$4" -v op="$3" 'BEGIN {print (op == "<=" ? v <= l : 0)}')
	printf '%-58s %10s  (bar %s %s)  %s\n' "$1" "$2" "$3" "$4" "$([ "$ok" = 1 ] && echo ok || echo MISSED)"
	[ "$ok" = 1 ] || [ "$b" != new ] || fail=1
}
for b in "${bins[@]}"; do
	[ ${#bins[@]} -gt 1 ] && echo "$b:"
	limit=$(awk -v f="${wall[$b-run-fresh]}" 'BEGIN {printf "%.3f", 2*f + 0.030}')
	bar "run on a year, s (2x fresh ${wall[$b-run-fresh]} s + 30 ms)" "${wall[$b-run-1y]}" "<=" "$limit"
	printf '%-58s %10s\n' "run on a year / fresh, wall" "$(awk -v a="${wall[$b-run-1y]}" -v f="${wall[$b-run-fresh]}" 'BEGIN {printf "%.2fx", a/f}')"
	printf '%-58s %10s\n' "run on a year - fresh, cpu s" "$(awk -v a="${cpu[$b-run-1y]}" -v f="${cpu[$b-run-fresh]}" 'BEGIN {printf "%.2f", a-f}')"
	bar "run on a year, peak RSS MiB" "${rss[$b-run-1y]}" "<=" 48
	bar "report on a year, peak RSS MiB" "${rss[$b-report-1y]}" "<=" 64
	bar "report on two years, peak RSS MiB" "${rss[$b-report-2y]}" "<=" 64
	bar "report: two years / one year" "$(awk -v a="${wall[$b-report-2y]}" -v f="${wall[$b-report-1y]}" 'BEGIN {printf "%.2f", a/f}')" "<=" 2.2
	printf '%-58s %10s\n' "report: two years / one year, cpu" "$(awk -v a="${cpu[$b-report-2y]}" -v f="${cpu[$b-report-1y]}" 'BEGIN {printf "%.2f", a/f}')"
done
echo "uptime after: $(uptime | sed 's/^ *//')"
if [ ${#bins[@]} -gt 1 ]; then
	echo "(the exit status is the new build's)"
fi
exit $fail
