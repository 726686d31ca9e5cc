# shellcheck shell=bash disable=SC2154
# Helpers shared by bench/*.sh (sourced, not run). The caller sets `runs` (timed runs per
# command) and `work` (scratch directory) before calling them.

# bench_install PKG...: installs the Debian packages PKG when run as root where apt-get exists
# (a fresh machine of this kind has few of the tools the scripts compare with); otherwise does
# nothing, and the caller says what is still missing.
bench_install() {
    [ $# -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null || return 0
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" > /dev/null 2>&1 || true
}

# bench_best CMD...: the best wall-clock seconds of $runs runs of CMD, output discarded.
# If a run fails, prints nothing and returns 1; its stderr is left in $work/stderr.
bench_best() {
    local best="" t
    for _ in $(seq "$runs"); do
        t=$(bench_once "$@") || return 1
        best=$(bench_min "$t" "$best")
    done
    echo "$best"
}

# bench_pair "CMD A" "CMD B": the best wall-clock seconds of $runs runs of each of two commands
# (each one string, split on blanks), taken in turn A, B, A, B..., into $pair_a and $pair_b.
# The VM this project measures on runs in phases 30-40 % apart that can change within one
# script, so a ratio of two rows timed one after the other can compare two phases; a ratio of
# alternating runs compares like with like. Empty on a failed run (stderr in $work/stderr).
bench_pair() {
    local -a a b
    read -r -a a <<< "$1"
    read -r -a b <<< "$2"
    pair_a=""
    pair_b=""
    local t
    for _ in $(seq "$runs"); do
        t=$(bench_once "${a[@]}") || { pair_a=""; pair_b=""; return 1; }
        pair_a=$(bench_min "$t" "$pair_a")
        t=$(bench_once "${b[@]}") || { pair_a=""; pair_b=""; return 1; }
        pair_b=$(bench_min "$t" "$pair_b")
    done
}

# bench_once CMD...: the wall-clock seconds of one run of CMD, output discarded.
bench_once() {
    local t0 t1
    t0=$(date +%s.%N)
    "$@" > /dev/null 2> "$work/stderr" || return 1
    t1=$(date +%s.%N)
    echo "$t0 $t1" | awk '{print $2 - $1}'
}

# bench_min A B: the smaller of two seconds, B possibly empty.
bench_min() {
    echo "$1 $2" | awk '{ if ($2 == "" || $1 < $2) print $1; else print $2 }'
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
