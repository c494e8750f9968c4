#!/usr/bin/env bash
# Times `orchestrator lint` on issue queues built to be slow to parse: for
# every kind bench/genhostile knows (long lines of list markers, lists and
# block quotes nested thousands deep, lines and tables of pipes, thousands of
# fences and comments, blocks left open, huge lines, CRLF variants, …), a
# 4 MiB queue (SIZE bytes) with the hostile part inside an issue. For each it
# prints the median wall time and CPU time (user + system) of RUNS runs
# (default 3) and the largest peak RSS, measured by GNU time. On a machine
# shared with other work the wall time is the CPU time plus the waiting; the
# CPU time is the steadier figure.
#
#   each kind: lint within 1 s wall and 100 MiB peak RSS
#
# With BASE set to a git revision, that revision is built too and measured
# side by side (each of its runs cut off after TIMEOUT seconds, default 60),
# to show before and after in one run.
#
# Exits 1 if a bar is missed, 2 if the setup fails.
#
# Usage: bench/hostile.sh     RUNS=5 bench/hostile.sh     BASE=main bench/hostile.sh
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${RUNS:-3}
size=${SIZE:-4194304}
timeout_s=${TIMEOUT:-60}
. bench/lib.sh
bench_start hostile
go build -o "$tmp/genhostile" ./bench/genhostile || exit 2
bins=(orchestrator)
if [ -n "${BASE:-}" ]; then
	git worktree add -q --detach "$tmp/base" "$BASE" || exit 2
	build_orchestrator "$tmp/orchestrator-base" "$tmp/base" || exit 2
	git worktree remove --force "$tmp/base"
	bins=(orchestrator-base orchestrator)
fi
"$tmp/orchestrator" init --dir "$tmp/state" >/dev/null || exit 2

# measure BIN KIND: sets wall, cpu (median seconds, or "timeout") and rss (max KiB).
measure() {
	local bin=$1 walls=() cpus=() r
	rss=0
	for r in $(seq "$runs"); do
		cp "$tmp/$2.md" "$tmp/state/issue_queue.md"
		rc=0
		timeout "$timeout_s" "$gnutime" -o "$tmp/time.out" -f '%e %U %S %M' "$tmp/$bin" --dir "$tmp/state" lint \
			>/dev/null 2>&1 || rc=$?
		if [ $rc = 124 ] || [ $rc -gt 128 ]; then
			wall=timeout cpu=timeout rss=-
			return
		fi
		# GNU time puts "Command exited with non-zero status N" first: lint
		# exits 1 on findings, which most of these files have.
		read -r w u s m < <(tail -n 1 "$tmp/time.out")
		walls+=("$w")
		cpus+=("$(awk "BEGIN { print $u + $s }")")
		[ "$m" -gt "$rss" ] && rss=$m
	done
	wall=$(printf '%s\n' "${walls[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
	cpu=$(printf '%s\n' "${cpus[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
}

fail=0
echo
echo "method: lint on a ${size}-byte queue per kind, median of $runs runs (wall, user + system CPU), largest peak RSS; bars: wall <= 1 s, RSS <= 100 MiB"
printf '%-18s %-18s %8s %8s %9s  %s\n' kind binary 'wall s' 'cpu s' 'RSS MiB' result
while IFS=$'\t' read -r kind _; do
	"$tmp/genhostile" -size "$size" "$kind" >"$tmp/$kind.md" || exit 2
	for bin in "${bins[@]}"; do
		measure "$bin" "$kind"
		res=''
		if [ "$bin" = orchestrator ]; then
			if [ "$wall" = timeout ] || awk "BEGIN { exit !($wall > 1 || $rss > 102400) }"; then
				res=FAIL
				fail=1
			else
				res=PASS
			fi
		fi
		if [ "$rss" = - ]; then mib=-; else mib=$(awk "BEGIN { printf \"%.1f\", $rss / 1024 }"); fi
		printf '%-18s %-18s %8s %8s %9s  %s\n' "$kind" "$bin" "$wall" "$cpu" "$mib" "$res"
	done
done < <("$tmp/genhostile" -list)
echo
echo "uptime after: $(uptime | sed 's/^ *//')"
exit $fail
