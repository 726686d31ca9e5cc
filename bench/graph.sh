#!/usr/bin/env bash
# Throughput of `rtsleuth graph` next to the raw read floor, on one machine, in one run. The
# input is the trace lines of perf-tools' funcgraph example (x86_64 Xen guest: -H headers,
# TIME column, task-switch banners, /* fn */ tails; the author's prose left out) repeated up
# to SIZE (default 200M) in bench/work (git-ignored).
#
# Usage: bench/graph.sh [SIZE]     e.g. bench/graph.sh 1G
# Prints, per command, the best wall time of RUNS runs, MB/s, the ratio to `wc -l`, and the
# peak RSS of one more (untimed) run under /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-200M}
runs=${RUNS:-3}
work=bench/work
mkdir -p "$work"
cargo build --release --quiet -p rtsleuth
bin=target/release
src=../shared/fixtures/realworld/perf-tools/examples/funcgraph_example.txt
trace="$work/funcgraph-$size.txt"
if [ ! -s "$trace" ]; then
    bytes_wanted=$(numfmt --from=iec "$size")
    # Only lines that are graph output: [TIME |] CPU) ..., and the banner rules.
    grep -E '^ *([0-9]+\.[0-9]+ \| +)?[0-9]+\)|^ -{10,}' "$src" > "$work/funcgraph-lines.txt"
    : > "$trace"
    while [ "$(stat -c %s "$trace")" -lt "$bytes_wanted" ]; do
        cat "$work/funcgraph-lines.txt" "$work/funcgraph-lines.txt" "$work/funcgraph-lines.txt" \
            "$work/funcgraph-lines.txt" >> "$trace"
    done
fi
lines=$(wc -l < "$trace")
echo "input: $trace, $(stat -c %s "$trace") bytes, $lines lines, $(nproc) CPUs"
cat "$trace" > /dev/null   # warm the page cache

. bench/lib.sh
bench_floor_table "$trace"
bench_row "wc -l (line floor)" wc -l "$trace"
bench_row "rtsleuth graph" "$bin/rtsleuth" graph "$trace"
bench_row "rtsleuth graph --json" "$bin/rtsleuth" graph --json "$trace"
bench_row "rtsleuth graph --func xen_evtchn_do_upcall (2 passes)" "$bin/rtsleuth" graph --func xen_evtchn_do_upcall "$trace"
