#!/usr/bin/env bash
# Throughput of rtsleuth's Perfetto reader on real-shaped inputs, each next to the "prost
# decode-only" floor, in one run.
#
# Inputs (one table each):
#  1. bench/work/compact-EVENTS.pftrace, written by
#       target/release/tracegen perfetto-compact --events EVENTS -o FILE
#     (EVENTS default 8M): the shape Android phones write with compact_sched on, 8 CPUs,
#     per-CPU ftrace bundles every 100 ms of trace time, sched_switch and sched_waking as
#     CompactSched columns with interned comms and delta-coded timestamps, every other event
#     (sched_wakeup, irq_handler_entry/exit, softirq_raise/entry/exit, hrtimer_start,
#     hrtimer_expire_entry/exit, cpu_idle, atrace print) as an FtraceEvent, hrtimer functions
#     as interned kernel_symbols. Regenerated when tracegen is newer than the file.
#     bench/perfetto_shape.py checks such a file against Perfetto's own proto classes.
#  2. bench/work/replicated-SIZE.pftrace (SIZE default 100M): the older input,
#     tests/fixtures/recorded/fifo_below/trace.txt replicated to SIZE by `tracegen replicate`
#     and written by `rtsleuth export --perfetto` (per-event bundles, no compact_sched, no
#     interning). EXPORT=0 leaves it out.
#  3. every Android trace under ../shared/fixtures/realworld/ms-perf-tools-linux-android/
#     (real phones, 36-64 k events, no compact_sched): their times are mostly start-up.
#
# Per file, each command's best wall-clock time of RUNS (default 3) runs, output discarded:
#   target/release/perfetto_floor FILE   the floor: prost decodes every TracePacket into
#       Perfetto's messages (Trace -> TracePacket -> FtraceEventBundle -> FtraceEvent with its
#       fields, CompactSched columns), touching each event's timestamp and type, nothing else
#       (crates/rtsleuth-tracegen/src/bin/perfetto_floor.rs, its own message definitions, not
#       rtsleuth's reader; one thread)
#   target/release/rtsleuth stats FILE
#   target/release/rtsleuth latency FILE
#   target/release/rtsleuth explain FILE
# and prints seconds, events/s (events: `rtsleuth stats --json`'s count, which must equal the
# floor's), the ratio of the time to the floor's, and whether stats reaches the target of
# >= 10 M events/s (met / NOT met).
#
# Usage: [RUNS=3] [SIZE=100M] [EXPORT=1] bench/perfetto.sh [EVENTS]
set -euo pipefail
cd "$(dirname "$0")/.."
events=${1:-8M}
size=${SIZE:-100M}
runs=${RUNS:-3}
work=bench/work
mkdir -p "$work"
# shellcheck source=bench/lib.sh
. bench/lib.sh
cargo build --release --quiet -p rtsleuth -p rtsleuth-tracegen
bin=target/release/rtsleuth
floor_bin=target/release/perfetto_floor
gen="$work/compact-$events.pftrace"
if [ ! -s "$gen" ] || [ target/release/tracegen -nt "$gen" ]; then
    target/release/tracegen perfetto-compact --events "$events" -o "$gen.tmp" > "$gen.json"
    mv "$gen.tmp" "$gen"
fi
inputs=("$gen")
if [ "${EXPORT:-1}" != 0 ]; then
    text="$work/replicated-$size.txt"
    [ -s "$text" ] || target/release/tracegen replicate --size "$size" tests/fixtures/recorded/fifo_below/trace.txt -o "$text"
    pf="$work/replicated-$size.pftrace"
    if [ ! -s "$pf" ]; then
        "$bin" export --perfetto "$pf.tmp" "$text" > /dev/null
        mv "$pf.tmp" "$pf"
    fi
    inputs+=("$pf")
fi
for f in ../shared/fixtures/realworld/ms-perf-tools-linux-android/TestData/Perfetto/*; do
    [ -s "$f" ] && inputs+=("$f")
done

echo "bench/perfetto.sh: best of $runs, $(nproc) cores, $(date -u +%Y-%m-%d)"
table() {   # table FILE: the rows for one Perfetto file
    local f=$1 events floor floor_events s stats_s
    events=$("$bin" stats --json "$f" | sed -n 's/^  "events": \([0-9]*\),$/\1/p')
    floor_events=$("$floor_bin" "$f" | awk '{print $2}')
    cat "$f" > /dev/null
    floor=$(bench_must "$floor_bin" "$f")
    printf '\n%s: %s bytes, %s events\n' "$f" "$(stat -c %s "$f")" "$events"
    [ "$floor_events" = "$events" ] ||
        printf '  warning: the floor decoded %s events, rtsleuth stats counts %s\n' "$floor_events" "$events"
    printf '  %-34s %8s %14s %12s\n' command seconds events/s "x floor time"
    awk -v s="$floor" -v e="$events" \
        'BEGIN { printf "  %-34s %8.3f %14.0f %12.2f\n", "prost decode-only (perfetto_floor)", s, e/s, 1 }'
    for cmd in stats latency explain; do
        s=$(bench_must "$bin" "$cmd" "$f")
        awk -v n="rtsleuth $cmd" -v s="$s" -v e="$events" -v fl="$floor" \
            'BEGIN { printf "  %-34s %8.3f %14.0f %12.2f\n", n, s, e/s, s/fl }'
        [ "$cmd" = stats ] && stats_s=$s
    done
    awk -v s="$stats_s" -v e="$events" \
        'BEGIN { r = e / s / 1e6; printf "  target: stats at %.1f M events/s, target >= 10 M events/s: %s\n", r, (r >= 10 ? "met" : "NOT met") }'
}
for f in "${inputs[@]}"; do
    table "$f"
done
