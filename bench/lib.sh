# shellcheck shell=bash disable=SC2154
# Helpers shared by bench/*.sh (sourced, not run). The caller sets `runs` (timed runs per
# command) and `work` (scratch directory) before calling them.

# bench_best CMD...: the best wall-clock seconds of $runs runs of CMD, output discarded.
# If a run fails, prints nothing and returns 1; its stderr is left in $work/stderr.
bench_best() {
    local best="" t0 t1
    for _ in $(seq "$runs"); do
        t0=$(date +%s.%N)
        "$@" > /dev/null 2> "$work/stderr" || return 1
        t1=$(date +%s.%N)
        best=$(echo "$t0 $t1 $best" | awk '{d=$2-$1; if ($3=="" || d<$3) print d; else print $3}')
    done
    echo "$best"
}

# bench_rss CMD...: the peak RSS in KB of one more (untimed) run of CMD under /usr/bin/time,
# or "-" when /usr/bin/time is missing or the run fails.
bench_rss() {
    if [ -x /usr/bin/time ] && /usr/bin/time -f '%M' -o "$work/rss" "$@" > /dev/null 2>&1; then
        tail -1 "$work/rss"
    else
        echo -
    fi
}

# bench_floor_table FILE: times `wc -l FILE` (the line floor, into $floor, with $bytes set to
# FILE's size) and prints the table header that bench_row rows follow. Aborts on failure.
bench_floor_table() {
    bytes=$(stat -c %s "$1")
    floor=$(bench_must wc -l "$1")
    printf '%-48s %8s %10s %14s %12s\n' command seconds MB/s "x wc -l time" "peak RSS KB"
}

# bench_must CMD...: bench_best, but a failed run aborts the script with its stderr.
bench_must() {
    bench_best "$@" || { echo "failed: $*" >&2; cat "$work/stderr" >&2; exit 1; }
}

# bench_row NAME CMD...: one table row: best time, MB/s of $bytes, ratio to $floor, peak RSS.
# The best time is left in $bench_last for ratios between rows.
bench_row() {
    local name=$1; shift
    local s rss
    s=$(bench_must "$@")
    bench_last=$s
    rss=$(bench_rss "$@")
    awk -v n="$name" -v s="$s" -v b="$bytes" -v f="$floor" -v r="$rss" \
        'BEGIN { printf "%-48s %8.3f %10.0f %14.2f %12s\n", n, s, b/s/1e6, s/f, r }'
}

# bench_ratio_target NAME A B MAX: whether A's seconds are within MAX times B's (the issue's
# ratio targets: explain within 1.3x latency's time, latency within 4x `wc -l`'s); a missing
# time (a failed row) is reported as such.
bench_ratio_target() {
    if [ -z "$2" ] || [ -z "$3" ]; then
        printf 'target: %s within %sx: a row failed\n' "$1" "$4"
        return 0
    fi
    awk -v n="$1" -v a="$2" -v b="$3" -v m="$4" \
        'BEGIN { r = a / b; printf "target: %s = %.2fx, target <= %sx: %s\n", n, r, m, (r <= m ? "met" : "NOT met") }'
}
