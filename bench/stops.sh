#!/bin/sh
# Replays every loop history in bench/histories under our default rules
# and under each peer rule set in bench/peers, and prints where each one
# stopped every history: our table (label, where we stopped, the verdict,
# what was saved), a line per history across the rule sets, and a totals
# line per rule set. Nothing is downloaded; the histories carry what the
# world did, and the real engine decides again with a simulated clock.
#
# Usage, from the repository's top: sh bench/stops.sh
set -e
cd "$(dirname "$0")/.."
exec go run ./bench/stops "$@"
