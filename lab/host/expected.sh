#!/usr/bin/env bash
# Writes a scenario's expected findings (JSON, on stdout) from the ground truth the injection left:
# the noise module's noise_begin/noise_end events, fifo_burst's "fifo_burst start" marks, or the
# host's measured stop for black_hole. The spike is cyclictest's break (its --tracemark line); the
# injection is the last one on the measured CPU that began before that break.
#
# usage: expected.sh SCENARIO_DIR KERNEL
set -euo pipefail
dir=${1%/} kernel=$2
scenario=$(basename "$dir")
kv() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" "$dir/inject.txt" | head -1; }
cpu=$(kv cpu)
threshold=$(kv threshold_us)
host_stop=$(sed -n 's/host_stop_us=//p' "$dir/host_stop.txt" 2>/dev/null || true)

awk -v scenario="$scenario" -v kernel="$kernel" -v cpu="$cpu" -v threshold="$threshold" \
    -v host_stop="$host_stop" -f "$(dirname "$0")/expected.awk" "$dir/trace.txt"
