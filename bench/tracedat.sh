#!/usr/bin/env bash
# Throughput of rtsleuth's trace.dat reader next to `trace-cmd report`, on one machine, in one
# run. The input is a LARGE trace.dat recorded live on this machine by
# `tests/fixtures/recorded/record.sh bench_dat` (root; it saves every tracefs setting it touches
# and restores it on exit, error or Ctrl-C): stress-ng --switch 2 --cyclic 1, fifo_burst and
# cyclictest, events sched/* irq/* timer/* irq_vectors/* workqueue/*, until the ring buffer
# holds EVENTS events, then `trace-cmd extract` (file format v7, zstd). It is cached in
# bench/work/ (recorded only when missing; delete it to record again) with a v6 uncompressed
# copy made by `trace-cmd convert`, and both are timed.
#
# Usage: bench/tracedat.sh [EVENTS]     e.g. bench/tracedat.sh 3000000   (default 1000000)
# Needs: trace-cmd; to record also root, tracefs, cyclictest, stress-ng, gcc (see record.sh;
# trace-cmd, cyclictest and stress-ng are installed here when root with apt-get);
# for the floor row gcc and libtracecmd-dev (installed here when root with apt-get).
# Prints, per file and command, the best wall time of RUNS (default 3) runs, events/s, MB/s of
# the file as stored, the speed-up over `trace-cmd report` on the same file (its seconds / the
# row's seconds: "23.4x" = 23.4 times faster), and the peak RSS of one more (untimed) run under
# /usr/bin/time ("-" without it). Beside `trace-cmd report` (which formats every event) it times
# the decode floor of trace-cmd's own library (bench/tracecmd_floor.c: libtracecmd's merged
# record iteration, timestamp and type only) and prints each rtsleuth row's time over it, then
# the targets in events a second, met or NOT met. A command that fails (rtsleuth before its trace.dat reader
# lands: "cannot read yet") gives a "failed:" row with its first stderr line; the script goes on.
set -euo pipefail
cd "$(dirname "$0")/.."
events=${1:-1000000}
runs=${RUNS:-3}
work=bench/work
mkdir -p "$work"
. bench/lib.sh
# A fresh machine of this kind has none of the recording's tools; root installs them.
missing=()
command -v trace-cmd > /dev/null || missing+=(trace-cmd)
command -v cyclictest > /dev/null || missing+=(rt-tests)
command -v stress-ng > /dev/null || missing+=(stress-ng)
bench_install "${missing[@]}"
command -v trace-cmd > /dev/null || { echo "missing tool: trace-cmd (apt-get install trace-cmd)" >&2; exit 1; }

bin=target/release/rtsleuth
if ! cargo build --release --quiet -p rtsleuth; then
    echo "warning: cargo build failed; the rtsleuth rows use $bin as it is (if any)" >&2
fi

# The floor: libtracecmd's own record iteration, timestamp and type only (tracecmd_floor.c).
floor="$work/tracecmd_floor"
pkg-config --exists libtracecmd 2> /dev/null ||
    bench_install libtracecmd-dev libtracefs-dev libtraceevent-dev
if [ bench/tracecmd_floor.c -nt "$floor" ] && pkg-config --exists libtracecmd 2> /dev/null; then
    gcc -O2 -Wall -o "$floor" bench/tracecmd_floor.c $(pkg-config --cflags --libs libtracecmd)
fi
[ -x "$floor" ] || echo "warning: no libtracecmd-dev: the floor row fails" >&2

dat="$work/tracedat-$events.dat"
v6="$work/tracedat-$events-v6.dat"
if [ ! -s "$dat" ]; then
    echo "recording $dat (about $events events) ..." >&2
    DAT_OUT="$PWD/$dat.tmp" DAT_EVENTS="$events" tests/fixtures/recorded/record.sh bench_dat
    mv "$dat.tmp" "$dat"
    rm -f "$v6" "$dat.events"
fi
if [ ! -s "$v6" ]; then
    trace-cmd convert -i "$dat" --file-version 6 --compression none -o "$v6.tmp" \
        > "$work/convert.log" 2>&1 || { cat "$work/convert.log" >&2; exit 1; }
    mv "$v6.tmp" "$v6"
fi
# events = the event lines of `trace-cmd report` (not its "cpus=N" header nor "CPU:N [...
# EVENTS DROPPED]" lines); both files hold the same events
if [ ! -s "$dat.events" ]; then
    trace-cmd report -i "$dat" 2> /dev/null |
        grep -cE '^ *.+-[0-9]+ +\[[0-9]+\] +[0-9]+\.[0-9]+: ' > "$dat.events" || true
fi
nevents=$(cat "$dat.events")
echo "input: $dat ($(stat -c %s "$dat") bytes, v7 zstd) and $v6 ($(stat -c %s "$v6") bytes," \
     "v6 uncompressed), $nevents events, $(nproc) CPUs, $(trace-cmd --version 2>&1 | grep -m1 -o 'version [^ ]*')"
cat "$dat" "$v6" > /dev/null   # warm the page cache

printf '%-30s %-8s %8s %12s %8s %10s %12s\n' command file seconds events/s MB/s "vs report" "peak RSS KB"
ref=""
declare -A speedup secs
# target NAME M: whether NAME read the last file at M million events a second or more.
target() {
    local got=${secs[$1]:-}
    [ -n "$got" ] || { printf '  %-26s failed, target >= %s M events/s\n' "$1" "$2"; return 0; }
    awk -v n="$1" -v s="$got" -v e="$nevents" -v t="$2" \
        'BEGIN { r = e / s / 1e6; printf "  %-26s %5.2f M events/s  target >= %d: %s\n", n, r, t, (r >= t ? "met" : "NOT met") }'
}
row() {   # row NAME FILE-LABEL FILE CMD...
    local name=$1 label=$2 file=$3 s rss; shift 3
    if ! s=$(bench_best "$@"); then
        printf '%-30s %-8s failed: %s\n' "$name" "$label" "$(head -c 160 "$work/stderr" | head -1)"
        return 0
    fi
    [ -n "$ref" ] || ref=$s
    secs[$name]=$s
    speedup[$name]=$(awk -v r="$ref" -v s="$s" 'BEGIN { printf "%.1f", r / s }')
    rss=$(bench_rss "$@")
    awk -v n="$name" -v l="$label" -v s="$s" -v e="$nevents" -v b="$(stat -c %s "$file")" \
        -v r="$ref" -v m="$rss" \
        'BEGIN { printf "%-30s %-8s %8.3f %12.0f %8.1f %9.1fx %12s\n", n, l, s, e/s, b/s/1e6, r/s, m }'
}
# floor_ratio LABEL FILE: each rtsleuth row's time over the libtracecmd floor's (below 1: faster
# than trace-cmd's library merely walking the records), and that the floor saw every event.
floor_ratio() {
    local fl=${secs["libtracecmd iterate (floor)"]:-}
    [ -n "$fl" ] || { echo "  (no floor row)"; return 0; }
    local n; n=$("$floor" "$2" | awk '{print $1}')
    [ "$n" = "$nevents" ] || echo "  warning: the floor iterated $n records, trace-cmd report printed $nevents events"
    for c in "rtsleuth stats" "rtsleuth latency" "rtsleuth explain"; do
        local g=${secs[$c]:-}
        [ -n "$g" ] && awk -v c="$c" -v g="$g" -v f="$fl" -v l="$1" \
            'BEGIN { printf "  %-26s %5.2fx the libtracecmd floor'"'"'s time (%s)\n", c, g / f, l }'
    done
    return 0
}
for f in "$dat" "$v6"; do
    label="v7-zstd"; [ "$f" = "$v6" ] && label="v6-none"
    ref=""   # the first row of each file, `trace-cmd report`, is the reference
    secs=()
    row "trace-cmd report" "$label" "$f" trace-cmd report -i "$f"
    row "trace-cmd report -R" "$label" "$f" trace-cmd report -R -i "$f"
    row "libtracecmd iterate (floor)" "$label" "$f" "$floor" "$f"
    row "rtsleuth stats" "$label" "$f" "$bin" stats "$f"
    row "rtsleuth latency" "$label" "$f" "$bin" latency "$f"
    row "rtsleuth latency --json" "$label" "$f" "$bin" latency "$f" --json
    row "rtsleuth explain" "$label" "$f" "$bin" explain "$f"
    echo "targets ($label; issue 30: latency >= 20 M events/s, stats faster still, explain >= 10):"
    target "rtsleuth stats" 20
    target "rtsleuth latency" 20
    target "rtsleuth explain" 10
    bench_ratio_target "explain / latency (rows)" "${secs["rtsleuth explain"]:-}" "${secs["rtsleuth latency"]:-}" 1.3
    bench_pair "$bin explain $f" "$bin latency $f" || true
    bench_ratio_target "explain / latency (alternating runs)" "$pair_a" "$pair_b" 1.3
    bench_ratio_target "stats / latency" "${secs["rtsleuth stats"]:-}" "${secs["rtsleuth latency"]:-}" 1
    floor_ratio "$label" "$f"
done
