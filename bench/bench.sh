#!/usr/bin/env bash
# Throughput of rtsleuth's ftrace text reader next to the raw read floor, on one machine, in
# one run. The input is a real trace recorded on this project's machine
# (tests/fixtures/recorded/fifo_below/trace.txt, 3.3 MB) repeated with shifted timestamps up to
# SIZE (default 100M) by `tracegen replicate`, so every line is a real kernel line.
#
# Usage: bench/bench.sh [SIZE]     e.g. bench/bench.sh 1G
# Prints, per command, the best wall time of RUNS runs, MB/s, and the ratio to `wc -l`.
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-100M}
runs=${RUNS:-3}
work=bench/work
mkdir -p "$work"
cargo build --release --quiet -p rtsleuth -p rtsleuth-tracegen
bin=target/release
trace="$work/replicated-$size.txt"
if [ ! -s "$trace" ]; then
    "$bin/tracegen" replicate --size "$size" tests/fixtures/recorded/fifo_below/trace.txt -o "$trace"
fi
bytes=$(stat -c %s "$trace")
lines=$(wc -l < "$trace")
echo "input: $trace, $bytes bytes, $lines lines, $(nproc) CPUs"
cat "$trace" > /dev/null   # warm the page cache

best() {   # best wall-clock seconds of $runs runs of "$@", output discarded
    local best=""
    for _ in $(seq "$runs"); do
        local t0 t1
        t0=$(date +%s.%N)
        "$@" > /dev/null 2> "$work/stderr" || { echo "failed: $*" >&2; cat "$work/stderr" >&2; exit 1; }
        t1=$(date +%s.%N)
        best=$(echo "$t0 $t1 $best" | awk '{d=$2-$1; if ($3=="" || d<$3) print d; else print $3}')
    done
    echo "$best"
}

floor=$(best wc -l "$trace")
printf '%-34s %8s %10s %14s\n' command seconds MB/s "x wc -l time"
row() {
    local name=$1; shift
    local s; s=$(best "$@")
    awk -v n="$name" -v s="$s" -v b="$bytes" -v f="$floor" \
        'BEGIN { printf "%-34s %8.3f %10.0f %14.2f\n", n, s, b/s/1e6, s/f }'
}
row "cat (read floor)" cat "$trace"
row "wc -l (line floor)" wc -l "$trace"
row "rtsleuth stats" "$bin/rtsleuth" stats "$trace"
row "rtsleuth latency" "$bin/rtsleuth" latency "$trace"
row "rtsleuth latency --json" "$bin/rtsleuth" latency --json "$trace"
/usr/bin/time -f '%M' -o "$work/rss" "$bin/rtsleuth" latency --json "$trace" > /dev/null 2>&1
rss=$(tail -1 "$work/rss")
echo "rtsleuth latency peak RSS: ${rss} KB (input ${bytes} bytes)"
