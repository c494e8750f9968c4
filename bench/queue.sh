#!/usr/bin/env bash
# Measures the commands that load the issue queue against cp of the same file,
# side by side in one run:
#
#   lint, check, status on a 10,000-issue queue (about 7 MiB)  within 8x cp
#   (the same on 20,000 issues is shown; its bar is the scaling below)
#   lint, check, status: 20,000 issues / 10,000 issues          at most 2.2x
#   status on the example (orchestrator init)                   within 10 ms
#
# The tool is built as the release binaries are (see build_orchestrator in
# bench/lib.sh): static, without cgo. Every command is timed as a whole
# process, the way cron runs it: the median
# wall time of RUNS runs (default 15) after 2 warm-up runs. Before every run,
# warm-ups included and not timed, the state directory is reset to the
# generated files (check rewrites them) and cp's destination is removed, so
# every run does the same work. The files are put back with their
# modification time of a minute ago (cp -p), as a queue saved a while before
# cron runs the command: the tool takes them as they are, without waiting
# for a save to finish. They are synced too, as the kernel writes back a
# file saved a minute ago: left dirty, the restored queue would go to disk
# with the first sync that follows (check's own), a cost that check does
# not have when cron runs it. The queues come from bench/genqueue: realistic
# issues, most resolved, one in 1,000 a pending auto-retry issue that check
# retries and one in 5,000 one that it escalates.
#
# With hyperfine installed (apt-get install hyperfine) the commands are timed
# with "hyperfine -N", one command after another. Without it, or with
# METHOD=loop, the clock is read around each run ($EPOCHREALTIME in bash 5,
# else date +%s%N), the commands taking turns run by run.
#
# Exits 1 if a bar is missed, 2 if the setup fails.
#
# Usage: bench/queue.sh       RUNS=31 bench/queue.sh       METHOD=loop bench/queue.sh
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${RUNS:-15}
warmup=2
method=${METHOD:-}
if [ -z "$method" ]; then
	if command -v hyperfine >/dev/null; then method=hyperfine; else method=loop; fi
fi
case $method in
hyperfine | loop) ;;
*)
	echo "bench/queue.sh: METHOD must be hyperfine or loop" >&2
	exit 2
	;;
esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/orchestrator-queue-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
bin=$tmp/orchestrator
export NO_COLOR=1

echo "uptime before: $(uptime | sed 's/^ *//')"
. bench/lib.sh
build_orchestrator "$bin" || exit 2
go build -o "$tmp/genqueue" ./bench/genqueue || exit 2
"$bin" init --dir "$tmp/example" >/dev/null || exit 2

# setup N: a state directory with the example config.toml and an N-issue
# queue, its pristine files kept aside, and a reset script that restores them.
declare -A bytes expect
setup() {
	local n=$1 d=$tmp/q$1 out
	"$bin" init --dir "$d" >/dev/null || exit 2
	out=$("$tmp/genqueue" -n "$n" -dir "$d" 2>&1) || {
		echo "$out" >&2
		exit 2
	}
	echo "$out"
	expect[$n]=$(echo "$out" | sed -n 's/.*check retries \([0-9]*\) .*/\1/p')
	cp "$d/issue_queue.md" "$tmp/queue$n.md"
	cp "$d/session_state.md" "$tmp/state$n.md"
	touch -d "@$(($(date +%s) - 60))" "$tmp/queue$n.md" "$tmp/state$n.md"
	bytes[$n]=$(wc -c <"$tmp/queue$n.md")
	cat >"$tmp/reset$n.sh" <<-EOF
		cp -p "$tmp/queue$n.md" "$d/issue_queue.md"
		cp -p "$tmp/state$n.md" "$d/session_state.md"
		sync "$d/issue_queue.md" "$d/session_state.md"
		rm -rf "$d/logs"
		rm -f "$tmp/cp-dest.md"
	EOF
	if ! "$bin" --dir "$d" lint >"$tmp/lint.out"; then
		echo "bench/queue.sh: the generated $n-issue queue does not lint clean:" >&2
		head -20 "$tmp/lint.out" >&2
		exit 2
	fi
	# check must retry what the generator says, so that every timed check
	# does the same, small amount of work.
	sh "$tmp/reset$n.sh"
	local rc=0
	"$bin" --dir "$d" check >"$tmp/check.out" 2>&1 || rc=$?
	if [ $rc != 0 ] || ! grep -q "Auto-retry triggered for ${expect[$n]} critical issue(s)" "$tmp/check.out"; then
		echo "bench/queue.sh: check on the $n-issue queue exited $rc without retrying ${expect[$n]} issues:" >&2
		tail -20 "$tmp/check.out" >&2
		exit 2
	fi
	sh "$tmp/reset$n.sh"
}
setup 10000
setup 20000
printf 'rm -f "%s/cp-dest.md"\n' "$tmp" >"$tmp/reset-example.sh"

# The benchmarks: label, reset script, command.
labels=()
declare -A prep cmd
add() {
	labels+=("$1")
	prep[$1]=$2
	cmd[$1]=$3
}
for n in 10000 20000; do
	k=$((n / 1000))k
	add "cp-$k" "$tmp/reset$n.sh" "cp $tmp/queue$n.md $tmp/cp-dest.md"
	add "lint-$k" "$tmp/reset$n.sh" "$bin --dir $tmp/q$n lint"
	add "check-$k" "$tmp/reset$n.sh" "$bin --dir $tmp/q$n check"
	add "status-$k" "$tmp/reset$n.sh" "$bin --dir $tmp/q$n status"
done
add status-example "$tmp/reset-example.sh" "$bin --dir $tmp/example status"

declare -A ms cpu # median wall time and mean CPU time (user + system), in milliseconds

# jsonfield NAME FILE: the first number called NAME in hyperfine's JSON, in ms.
jsonfield() { awk -F': *' '/"'"$1"'":/ { gsub(/[ ,]/, "", $2); printf "%.3f", $2 * 1000; exit }' "$2"; }

# childcpu FILE: the CPU time of the shell's finished children, in ms, from
# the output of the times builtin.
childcpu() { awk 'NR == 2 { split($1, u, "m"); split($2, s, "m"); printf "%.0f", (u[1] * 60 + u[2] + s[1] * 60 + s[2]) * 1000 }' "$1"; }
if [ $method = hyperfine ]; then
	how="median of $runs runs after $warmup warm-up runs, $(hyperfine --version) -N, one command after another"
	for l in "${labels[@]}"; do
		hyperfine -N --style none --warmup $warmup --runs "$runs" --prepare "sh ${prep[$l]}" \
			--export-json "$tmp/$l.json" "${cmd[$l]}" >/dev/null 2>"$tmp/$l.err" || {
			echo "bench/queue.sh: hyperfine failed on ${cmd[$l]}:" >&2
			cat "$tmp/$l.err" >&2
			exit 2
		}
		ms[$l]=$(jsonfield median "$tmp/$l.json")
		cpu[$l]=$(awk "BEGIN { printf \"%.3f\", $(jsonfield user "$tmp/$l.json") + $(jsonfield system "$tmp/$l.json") }")
	done
else
	# bash 5 reads the clock without starting a process; date is the fallback.
	if [ -n "${EPOCHREALTIME:-}" ]; then clock='$EPOCHREALTIME'; else clock='date +%s%N'; fi
	how="median of $runs runs after $warmup warm-up runs, $clock read around each run, the commands taking turns"
	declare -A walls cpus
	for r in $(seq $((warmup + runs))); do
		for l in "${labels[@]}"; do
			sh "${prep[$l]}"
			if [ -n "${EPOCHREALTIME:-}" ]; then t0=${EPOCHREALTIME//[!0-9]/}000; else t0=$(date +%s%N); fi
			times >"$tmp/times0" # not in a subshell: a fork would not see this shell's children
			# shellcheck disable=SC2086 # the command is split into words on purpose
			${cmd[$l]} >/dev/null 2>&1 || {
				echo "bench/queue.sh: ${cmd[$l]} failed" >&2
				exit 2
			}
			times >"$tmp/times1"
			if [ -n "${EPOCHREALTIME:-}" ]; then t1=${EPOCHREALTIME//[!0-9]/}000; else t1=$(date +%s%N); fi
			if [ "$r" -gt $warmup ]; then
				walls[$l]+="$((t1 - t0)) "
				cpus[$l]+="$(($(childcpu "$tmp/times1") - $(childcpu "$tmp/times0"))) "
			fi
		done
	done
	for l in "${labels[@]}"; do
		ms[$l]=$(echo "${walls[$l]}" | tr ' ' '\n' | grep . | sort -n |
			awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.3f", m / 1e6 }')
		cpu[$l]=$(echo "${cpus[$l]}" | awk '{ for (i = 1; i <= NF; i++) t += $i } END { printf "%.3f", t / NF }')
	done
fi

fail=0
verdict() { # verdict CONDITION(awk expression): sets res to PASS or FAIL
	if awk "BEGIN { exit !($1) }"; then res=PASS; else
		res=FAIL
		fail=1
	fi
}
ratio() { awk "BEGIN { printf \"%.2f\", $1 / $2 }"; }

row() { # row LABEL WALL_MS WALL_RATIO CPU_MS CPU_RATIO BAR RESULT
	local line
	line=$(printf '%-30s %9.2f %7s %9.2f %7s  %-10s %s' "$@")
	echo "${line%"${line##*[! ]}"}"
}
echo
echo "method: $how"
echo "queues: 10k issues $(awk "BEGIN { printf \"%.2f\", ${bytes[10000]} / 1048576 }") MiB, 20k issues $(awk "BEGIN { printf \"%.2f\", ${bytes[20000]} / 1048576 }") MiB"
echo "wall: median wall time; cpu: mean user + system time; the bars apply to wall"
echo
printf '%-30s %9s %7s %9s %7s  %-10s %s\n' command 'wall ms' 'x cp' 'cpu ms' 'x cp' bar result
for n in 10000 20000; do
	k=$((n / 1000))k
	row "cp issue_queue.md ($k)" "${ms[cp-$k]}" 1.00 "${cpu[cp-$k]}" 1.00 baseline ''
	for c in lint check status; do
		x=$(ratio "${ms[$c-$k]}" "${ms[cp-$k]}")
		if [ "$n" = 10000 ]; then
			verdict "$x <= 8"
			row "orchestrator $c ($k)" "${ms[$c-$k]}" "$x" "${cpu[$c-$k]}" "$(ratio "${cpu[$c-$k]}" "${cpu[cp-$k]}")" '<= 8x cp' $res
		else # the bar at 20k is linearity, below; cp itself grows less than linearly
			row "orchestrator $c ($k)" "${ms[$c-$k]}" "$x" "${cpu[$c-$k]}" "$(ratio "${cpu[$c-$k]}" "${cpu[cp-$k]}")" '' ''
		fi
	done
done
verdict "${ms[status-example]} <= 10"
row "orchestrator status (example)" "${ms[status-example]}" '' "${cpu[status-example]}" '' '<= 10 ms' $res
echo
printf '%-30s %9s %9s  %-10s %s\n' 'scaling, 20k / 10k' wall cpu bar result
printf '%-30s %9s %9s\n' cp "$(ratio "${ms[cp-20k]}" "${ms[cp-10k]}")" "$(ratio "${cpu[cp-20k]}" "${cpu[cp-10k]}")"
for c in lint check status; do
	x=$(ratio "${ms[$c-20k]}" "${ms[$c-10k]}")
	verdict "$x <= 2.2"
	printf '%-30s %9s %9s  %-10s %s\n' "orchestrator $c" "$x" "$(ratio "${cpu[$c-20k]}" "${cpu[$c-10k]}")" '<= 2.2' $res
done
echo
echo "uptime after: $(uptime | sed 's/^ *//')"
exit $fail
