#!/usr/bin/env bash
# Instructions, not seconds: what `explain` executes beside `latency` on the inputs of
# bench/bench.sh and bench/tracedat.sh, counted by valgrind (cachegrind, no cache model).
# The development VM runs in phases 30-70 % apart, sometimes within one script's run, so a
# change of a few percent cannot be seen in wall times there; an instruction count is the
# same on every run. It is a gauge for changes, not one of issue 30's targets: two cores'
# wall time also depends on how well the threads overlap and on what each instruction costs.
#
# Usage: bench/instructions.sh [BASELINE-BINARY]
# Needs the inputs the other two scripts leave in bench/work/ (run them first) and valgrind
# (installed here when root with apt-get). With BASELINE-BINARY, each explain row also
# gives that binary's count and the change.
set -euo pipefail
cd "$(dirname "$0")/.."
work=bench/work
base=${1:-}
. bench/lib.sh
command -v valgrind > /dev/null || bench_install valgrind
command -v valgrind > /dev/null || { echo "missing tool: valgrind (apt-get install valgrind)" >&2; exit 1; }
cargo build --release --quiet -p rtsleuth
bin=target/release/rtsleuth

# count CMD...: the instructions CMD executes, in millions.
count() {
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$@" 2>&1 > /dev/null |
        awk '/I +refs:/ { gsub(",", "", $NF); printf "%.1f", $NF / 1e6 }'
}

# The text replica is cut to its first 20 MB: valgrind runs 30-50 times slower.
text="$work/replicated-100M.txt"
cut="$work/replicated-20M-cut.txt"
[ -s "$text" ] && { [ -s "$cut" ] || head -c 20000000 "$text" > "$cut"; }
printf '%-40s %12s %12s %10s %12s\n' input "explain M" "latency M" ratio "baseline M"
for f in "$cut" "$work/tracedat-1000000.dat" "$work/tracedat-1000000-v6.dat"; do
    [ -s "$f" ] || { echo "$f: missing (run bench/bench.sh and bench/tracedat.sh first)"; continue; }
    t=(); case $f in *.txt) t=(--threshold 100) ;; esac
    e=$(count "$bin" explain "${t[@]}" "$f")
    l=$(count "$bin" latency "$f")
    b=-
    [ -n "$base" ] && b=$(count "$base" explain "${t[@]}" "$f")
    awk -v f="$f" -v e="$e" -v l="$l" -v b="$b" 'BEGIN {
        c = (b == "-") ? "-" : sprintf("%.1f (%+.1f%%)", b, (e - b) / b * 100)
        printf "%-40s %12.1f %12.1f %9.3fx %12s\n", f, e, l, e / l, c }'
done
