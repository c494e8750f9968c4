#!/usr/bin/env bash
# Measures recording the workspace state of a 10,000-file git repository
# against "git status --porcelain" on the same repository, side by side in
# one run:
#
#   the state, warm (the private index already made), nothing changed   within 1.5x git status
#   the state, warm, 10 tracked files edited before each run             within 1.5x git status
#
# Each round edits 10 files, then times the state and git status (both see
# the 10 files changed since their own last run), then both again (nothing
# changed since). The first recording (the private index made from nothing,
# every file hashed) is shown, not barred. Every command is timed as a whole
# process (so the state's figures include starting a Go program, about 10 ms
# of CPU on a small virtual machine, which the tool, recording from its own
# running process, does not pay):
# the median wall time of RUNS runs (default 15) after 2 warm-up runs, the
# two commands taking turns run by run, the clock read around each run
# ($EPOCHREALTIME in bash 5, else date +%s%N). The mean CPU time (user +
# system) is shown beside it: it changes less when other processes share the
# machine. The repository comes from bench/genworkspace: 10,000 committed Go
# files of 20 to 60 lines in 100 directories, an ignored build directory, 5
# untracked files and a state directory that is neither tracked nor ignored.
#
# Exits 1 if a bar is missed, 2 if the setup fails.
#
# Usage: bench/workspace.sh       RUNS=31 bench/workspace.sh       FILES=20000 bench/workspace.sh
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${RUNS:-15}
files=${FILES:-10000}
warmup=2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/orchestrator-workspace-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
repo=$tmp/repo
gen=$tmp/genworkspace

echo "uptime before: $(uptime | sed 's/^ *//')"
go build -o "$gen" ./bench/genworkspace || exit 2
"$gen" -dir "$repo" -files "$files" || exit 2

now() { if [ -n "${EPOCHREALTIME:-}" ]; then echo "${EPOCHREALTIME//[!0-9]/}000"; else date +%s%N; fi; }
# childcpu FILE: the CPU time of the shell's finished children, in ms, from
# the output of the times builtin.
childcpu() { awk 'NR == 2 { split($1, u, "m"); split($2, s, "m"); printf "%.0f", (u[1] * 60 + u[2] + s[1] * 60 + s[2]) * 1000 }' "$1"; }

declare -A walls cpus
# timed LABEL COMMAND...: runs the command once, adding its wall and CPU
# time to LABEL's lists.
timed() {
	local label=$1 t0 t1
	shift
	times >"$tmp/times0"
	t0=$(now)
	"$@" >/dev/null 2>"$tmp/err" || {
		echo "bench/workspace.sh: $* failed:" >&2
		cat "$tmp/err" >&2
		exit 2
	}
	t1=$(now)
	times >"$tmp/times1"
	walls[$label]+="$((t1 - t0)) "
	cpus[$label]+="$(($(childcpu "$tmp/times1") - $(childcpu "$tmp/times0"))) "
}

state() { "$gen" -state -dir "$repo"; }
status() { git -C "$repo" status --porcelain; }

# The first recording, then the warm-ups of both.
timed first state
for _ in $(seq $warmup); do
	state >/dev/null
	status >/dev/null
done
# Each round edits the files once; both commands then see the same 10
# files changed since their own last run, and then nothing changed since
# it. The edit toggles the same 10 files, so in every other round they
# differ from git's index, and git status reads them again even when
# nothing changed (it cannot refresh a modified entry); the tool's state
# command compares stat data only. That costs git status little next to
# a scan of the whole tree, and favours the tool's idle ratio a little.
for r in $(seq "$runs"); do
	"$gen" -edit 10 -dir "$repo"
	timed state-edit state
	timed status-edit status
	timed state-idle state
	timed status-idle status
done

median() { echo "$1" | tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.2f", m / 1e6 }'; }
mean() { echo "$1" | awk '{ for (i = 1; i <= NF; i++) t += $i } END { printf "%.2f", t / NF }'; }
ratio() { awk "BEGIN { printf \"%.2f\", $1 / $2 }"; }

fail=0
echo
echo "method: median wall time of $runs runs after $warmup warm-up runs, the commands taking turns; cpu: mean user + system"
echo "repository: $files files, $(du -sh "$repo" --exclude=.git | cut -f1) of work tree; state directory: $(du -sh "$repo/.orchestrator/workspace" | cut -f1) after the runs"
echo
printf '%-34s %9s %9s %8s %8s  %-9s %s\n' case 'state ms' 'status ms' 'x wall' 'x cpu' bar result
for c in idle edit; do
	sw=$(median "${walls[state-$c]}")
	gw=$(median "${walls[status-$c]}")
	x=$(ratio "$sw" "$gw")
	xc=$(ratio "$(mean "${cpus[state-$c]}")" "$(mean "${cpus[status-$c]}")")
	if awk "BEGIN { exit !($x <= 1.5) }"; then res=PASS; else res=FAIL; fail=1; fi
	case $c in
	idle) what="warm, nothing changed" ;;
	edit) what="warm, 10 files edited each run" ;;
	esac
	printf '%-34s %9s %9s %8s %8s  %-9s %s\n' "$what" "$sw" "$gw" "$x" "$xc" '<= 1.5x' $res
done
printf '%-34s %9s\n' "first recording (cold)" "$(median "${walls[first]}")"
echo
echo "uptime after: $(uptime | sed 's/^ *//')"
exit $fail
