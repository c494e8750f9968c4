#!/usr/bin/env bash
# Kills every command that writes the state files at random instants, and
# races fails with a person's editor, at full size, and prints the counts:
#
#   KILLS SIGKILLs in all (default 1000), spread over add, fail, check,
#   resolve and archive, half at a random instant of the command and half
#   just after its first temporary file appears; after each, the next
#   command must find no torn file, no issue lost or in both the queue and
#   the archive, every failure fail reported recorded in its issue and in
#   the event log once, and the issues' Retry-Count adding up to the run's
#   total_auto_retries;
#
#   FAILS fails (default 100) racing an editor that saves by renaming a new
#   file over the old one, by renaming the old one away first, and in
#   place: no failure lost, no word the editor saved dropped.
#
# These are the Linux process tests TestProcessKillEveryCommand and
# TestProcessFailRacesEditorSaves, which go test runs at a smaller size.
# Exits 1 if a promise is broken.
#
# Usage: scripts/crashcheck.sh      KILLS=5000 FAILS=400 scripts/crashcheck.sh
set -euo pipefail
cd "$(dirname "$0")/.."
kills=${KILLS:-1000}
fails=${FAILS:-100}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
go test ./cmd/orchestrator -run '^(TestProcessKillEveryCommand|TestProcessFailRacesEditorSaves)$' -count=1 -v -timeout 60m \
	-kills="$kills" -editor-race-fails="$fails" >"$out" 2>&1 || status=1
grep -E '^\s+(kill|midsave)_process_test.go:[0-9]+: ' "$out" | sed -E 's/^\s+[a-z_]+\.go:[0-9]+: //' | grep -vE '^round [0-9]+ ' || true
if [ $status -ne 0 ]; then
	grep -E -- '--- FAIL|_test.go:[0-9]+: round|want 0|lost|torn' "$out" | head -40
	echo "crashcheck: FAILED" >&2
fi
exit $status
