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
