#!/usr/bin/env bash
# Peak memory of `rtsleuth explain --json DIR` as the set grows: DIR holds N links to one lab
# trace (tests/fixtures/lab/rt/printk/trace.txt.zst, 292 KB of zstd, 6.9 MB of text), for N
# = 1, 16, 256 and 1024. A set streams (each trace's report is written, and its outcome
# dropped, as soon as its turn comes; see fleet::analyse_all), so the peak should stop growing
# once the readers in flight are all busy; the last column is the peak over N=16's.
#
# Usage: bench/set_memory.sh        (RUNS is not used: one run per N, peak RSS only)
# The peer row is the single trace analysed alone, the floor any set pays per reader.
set -euo pipefail
cd "$(dirname "$0")/.."
work=bench/work
mkdir -p "$work"
# shellcheck source=bench/lib.sh
. bench/lib.sh
cargo build --release --quiet -p rtsleuth
bin=$PWD/target/release/rtsleuth
trace=$PWD/tests/fixtures/lab/rt/printk/trace.txt.zst
printf '%-44s %12s %10s %12s\n' command "peak RSS KB" seconds "x N=16 peak"
one=$(bench_rss "$bin" explain --json "$trace")
printf '%-44s %12s %10s %12s\n' "explain --json TRACE (peer: one trace)" "$one" - -
base=""
for n in 16 256 1024; do
    dir="$work/set-links-$n"
    if [ ! -d "$dir" ]; then
        mkdir -p "$dir"
        for i in $(seq "$n"); do ln -s "$trace" "$dir/t$i.txt.zst"; done
    fi
    t0=$(date +%s.%N)
    rss=$(bench_rss "$bin" explain --json "$dir")
    t1=$(date +%s.%N)
    base=${base:-$rss}
    ratio=$(awk -v a="$rss" -v b="$base" 'BEGIN { printf "%.2f", a / b }')
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
    printf '%-44s %12s %10s %12s\n' "explain --json DIR of $n traces" "$rss" "$secs" "$ratio"
done
