#!/usr/bin/env bash
# Throughput of rtsleuth's Perfetto reader in events per second, next to the raw read floor
# (`cat FILE > /dev/null`), in one run. The input is the real recorded text trace
# tests/fixtures/recorded/fifo_below/trace.txt replicated to SIZE (default 100M, as in
# bench/bench.sh) and written as Perfetto by `rtsleuth export --perfetto` (per-CPU ftrace
# bundles of typed events, as Perfetto's own ftrace data source writes them); it is cached in
# bench/work/. The Android traces of ../shared are real device traces but hold only 36-64 k
# events, too few to time; they get a row each for the record.
#
# Usage: bench/perfetto.sh [SIZE]
# Prints the best of RUNS (default 3) runs per command, events/s, MB/s, the ratio to the read
# floor's time, and whether stats reaches the target of 10 M events/s.
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-100M}
runs=${RUNS:-3}
work=bench/work
mkdir -p "$work"
# shellcheck source=bench/lib.sh
. bench/lib.sh
cargo build --release --quiet -p rtsleuth -p rtsleuth-tracegen
bin=target/release/rtsleuth
text="$work/replicated-$size.txt"
[ -s "$text" ] || target/release/tracegen replicate --size "$size" tests/fixtures/recorded/fifo_below/trace.txt -o "$text"
pf="$work/replicated-$size.pftrace"
if [ ! -s "$pf" ]; then
    "$bin" export --perfetto "$pf.tmp" "$text" > /dev/null
    mv "$pf.tmp" "$pf"
fi
table() {   # table FILE: the rows for one Perfetto file
    local f=$1 events floor s
    events=$("$bin" stats --json "$f" | sed -n 's/^  "events": \([0-9]*\),$/\1/p')
    cat "$f" > /dev/null
    floor=$(bench_must cat "$f")
    printf '%s: %s bytes, %s events\n' "$f" "$(stat -c %s "$f")" "$events"
    printf '  %-30s %8s %14s %8s %12s\n' command seconds events/s MB/s "x cat time"
    for cmd in stats latency explain; do
        s=$(bench_must "$bin" "$cmd" "$f")
        awk -v n="rtsleuth $cmd" -v s="$s" -v e="$events" -v b="$(stat -c %s "$f")" -v fl="$floor" \
            'BEGIN { printf "  %-30s %8.3f %14.0f %8.1f %12.1f\n", n, s, e/s, b/s/1e6, s/fl }'
        [ "$cmd" = stats ] && stats_s=$s
    done
    awk -v s="$stats_s" -v e="$events" \
        'BEGIN { r = e / s / 1e6; printf "  target: stats at %.1f M events/s, target >= 10 M events/s: %s\n", r, (r >= 10 ? "met" : "NOT met") }'
}
table "$pf"
for f in ../shared/fixtures/realworld/ms-perf-tools-linux-android/TestData/Perfetto/*.pftrace; do
    [ -s "$f" ] && table "$f"
done
