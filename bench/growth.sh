#!/usr/bin/env bash
# How rtsleuth's time and memory grow with the size of its input (issue 30, point 5): each
# reader at two or three sizes, in one run, with time per byte (or per event) and peak RSS
# compared with the smallest size of the same reader and command.
#
# Usage: [SIZES="100M 1G"] [PF_EVENTS="1M 10M"] [DAT_EVENTS="1000000 3000000 10000000"] \
#        [RUNS=3] bench/growth.sh
#        bench/growth.sh --table     (the last run's table again, from bench/work/growth.tsv)
#   e.g. SIZES="100M 1G 10G" bench/growth.sh     (10G is opt-in: 10 GiB of disk; the whole run
#                                                 took 5 min on the 2-core development VM)
#        SIZES=10M PF_EVENTS=100K DAT_EVENTS=1000000 RUNS=1 bench/growth.sh   (a quick check)
#   An empty list leaves that reader out (SIZES= PF_EVENTS= bench/growth.sh: trace.dat only).
#
# Inputs, cached in bench/work/ (made only when missing; shared with the other bench scripts):
#   ftrace text  replicated-SIZE.txt for each of SIZES (default "100M 1G"): the recorded
#                tests/fixtures/recorded/fifo_below/trace.txt repeated with shifted timestamps
#                by `tracegen replicate --size SIZE` (as bench/bench.sh). Commands: `wc -l` (the
#                peer), `rtsleuth latency`, `rtsleuth stats`, `rtsleuth explain --threshold 100`.
#   Perfetto     compact-N.pftrace for each N of PF_EVENTS (default "1M 10M"), phone-shaped
#                (compact_sched, interned strings, 8 CPUs) from `tracegen perfetto-compact
#                --events N` (as bench/perfetto.sh; remade when tracegen is newer). Commands:
#                `perfetto_floor` (the prost decode-only peer), `rtsleuth stats`, `latency`,
#                `explain` (the commands of bench/perfetto.sh).
#   trace.dat    tracedat-N.dat for each N of DAT_EVENTS (default "1000000 3000000 10000000"):
#                v7 zstd, recorded live on this machine by bench/tracedat.sh's recorder
#                (`tests/fixtures/recorded/record.sh bench_dat`: root and tracefs; stress-ng,
#                fifo_burst and cyclictest until the ring buffer holds N events, at most 30 s;
#                about 1.6 M events a second on the development VM, so 10 M took 7 s; a ring
#                buffer of N x 96 bytes per CPU; tracefs restored on exit) when missing: the
#                same file `bench/tracedat.sh N` records and reads. A trace.dat
#                cannot be made bigger offline (`trace-cmd convert` or concatenating copies
#                does not give a valid larger recording), so without root or tracefs the sizes
#                not already recorded are skipped with a note. Commands: the libtracecmd
#                floor ($work/tracecmd_floor, built by bench/tracedat.sh; left out when
#                missing), `rtsleuth stats`, `latency`, `explain` (as bench/tracedat.sh).
#
# Measured, per reader, command and size, on an input in the page cache, output discarded:
#   seconds      the best wall-clock time of RUNS (default 3) runs (bench/lib.sh bench_best)
#   MB/s, M ev/s the input's bytes (as stored) and events (`rtsleuth stats --json`'s count)
#                over those seconds
#   peak RSS KB  /usr/bin/time -f %M of one more, untimed, run (bench_rss). It counts the
#                touched pages of a mapped input too: the trace.dat and Perfetto readers map
#                the file and keep its pages, so their peak RSS grows with the file even where
#                their own (anonymous) memory does not; RssAnon in /proc/PID/status tells them
#                apart
#   time x       time per byte (text) or per event (Perfetto, trace.dat) over that of the same
#                command on the reader's smallest input: "linear" when at most 1.25
#   RSS x        peak RSS over that on the smallest input: "flat" when at most 1.5
# then one verdict line per reader and command: linear / NOT linear, flat / NOT flat (over
# every size). A rtsleuth command that fails gives a "failed" row and the run goes on.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=${SIZES-100M 1G}
pf_events=${PF_EVENTS-1M 10M}
dat_events=${DAT_EVENTS-1000000 3000000 10000000}
runs=${RUNS:-3}
work=bench/work
mkdir -p "$work"
# shellcheck source=bench/lib.sh
. bench/lib.sh
results="$work/growth.tsv"   # one line per row, kept for --table

# table: the table and the verdicts of $results
table() {
    echo
    sed -n 's/^# //p' "$results"
    awk -F '\t' '
/^#/ { next }
{
    key = $1 SUBSEP $2
    if (!(key in first)) { first[key] = NR; order[++nkeys] = key }
    row[NR] = $0; reader[NR] = $1; name[NR] = $2; label[NR] = $3; unit[NR] = $4
    bytes[NR] = $5; ev[NR] = $6; s[NR] = $7; rss[NR] = $8
    u = ($4 == "bytes") ? $5 : $6
    per[NR] = ($7 == "failed") ? "" : $7 / u
    # the reference: the smallest input of this reader and command that was timed
    if (per[NR] != "" && (!(key in base_u) || u < base_u[key])) {
        base_u[key] = u; base_per[key] = per[NR]; base_rss[key] = $8
    }
    rows[key] = rows[key] " " NR
}
END {
    printf "%-9s %-34s %-8s %12s %11s %9s %8s %7s %11s %13s %11s\n", "reader", "command", "input",
        "bytes", "events", "seconds", "MB/s", "M ev/s", "peak RSS KB", "time x", "RSS x"
    for (k = 1; k <= nkeys; k++) {
        key = order[k]; n = split(rows[key], ids, " ")
        worst_t = 0; worst_m = 0; failed = 0; nom = 0
        for (j = 1; j <= n; j++) {
            i = ids[j]
            if (per[i] == "") {
                printf "%-9s %-34s %-8s %12.0f %11.0f %9s\n", reader[i], name[i], label[i], bytes[i], ev[i], "failed"
                failed = 1; continue
            }
            tr = per[i] / base_per[key]; if (tr > worst_t) worst_t = tr
            ts = sprintf("%.2f %s", tr, tr <= 1.25 ? "linear" : "NOT")
            if (rss[i] == "-" || base_rss[key] == "-" || base_rss[key] == 0) { ms = "-"; nom = 1 }
            else {
                mr = rss[i] / base_rss[key]; if (mr > worst_m) worst_m = mr
                ms = sprintf("%.2f %s", mr, mr <= 1.5 ? "flat" : "NOT")
            }
            printf "%-9s %-34s %-8s %12.0f %11.0f %9.3f %8.0f %7.2f %11s %13s %11s\n", reader[i], name[i],
                label[i], bytes[i], ev[i], s[i], bytes[i] / s[i] / 1e6, ev[i] / s[i] / 1e6, rss[i], ts, ms
        }
        verdict[k] = sprintf("%-9s %-34s time: %s (worst %.2fx), memory: %s (worst %.2fx)%s", reader[i],
            name[i], worst_t <= 1.25 ? "linear" : "NOT linear", worst_t,
            nom ? "unknown" : (worst_m <= 1.5 ? "flat" : "NOT flat"), worst_m, failed ? ", some sizes failed" : "")
    }
    print ""
    print "verdicts (over every size, against the smallest):"
    for (k = 1; k <= nkeys; k++) print verdict[k]
}' "$results"
}
if [ "${1:-}" = --table ]; then
    table
    exit 0
fi
cargo build --release --quiet -p rtsleuth -p rtsleuth-tracegen
printf '# bench/growth.sh: best of %s, %s CPUs, %s; time x: time per byte (text) or per event over the smallest input'"'"'s (linear <= 1.25); RSS x: peak RSS over the smallest input'"'"'s (flat <= 1.5)\n' \
    "$runs" "$(nproc)" "$(date -u +%Y-%m-%d)" > "$results"
bin=target/release/rtsleuth
gen=target/release/tracegen

# events FILE: rtsleuth's event count of FILE, cached beside it in FILE.stats-events
events() {
    local f=$1
    if [ ! -s "$f.stats-events" ] || [ "$f" -nt "$f.stats-events" ]; then
        "$bin" stats --json "$f" | sed -n 's/^  "events": \([0-9]*\),$/\1/p' > "$f.stats-events"
    fi
    cat "$f.stats-events"
}

# measure READER UNIT LABEL FILE NAME CMD...: time NAME (CMD) on FILE and append its result
# line to $results; UNIT (bytes or events) is what its time is divided by for the ratios
measure() {
    local reader=$1 unit=$2 label=$3 file=$4 name=$5 s rss; shift 5
    echo "  $reader $label: $name" >&2
    if s=$(bench_best "$@"); then
        rss=$(bench_rss "$@")
    else
        echo "  failed: $* ($(head -c 160 "$work/stderr" | head -1))" >&2
        s=failed rss=-
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$reader" "$name" "$label" "$unit" \
        "$(stat -c %s "$file")" "$(events "$file")" "$s" "$rss" >> "$results"
}

# --- ftrace text
for size in $sizes; do
    f="$work/replicated-$size.txt"
    if [ ! -s "$f" ]; then
        echo "making $f ..." >&2
        "$gen" replicate --size "$size" tests/fixtures/recorded/fifo_below/trace.txt -o "$f.tmp"
        mv "$f.tmp" "$f"
    fi
    cat "$f" > /dev/null   # into the page cache
    measure text bytes "$size" "$f" "wc -l (peer)" wc -l "$f"
    measure text bytes "$size" "$f" "rtsleuth latency" "$bin" latency "$f"
    measure text bytes "$size" "$f" "rtsleuth stats" "$bin" stats "$f"
    measure text bytes "$size" "$f" "rtsleuth explain --threshold 100" "$bin" explain --threshold 100 "$f"
done

# --- Perfetto
for n in $pf_events; do
    f="$work/compact-$n.pftrace"
    if [ ! -s "$f" ] || [ "$gen" -nt "$f" ]; then
        echo "making $f ..." >&2
        "$gen" perfetto-compact --events "$n" -o "$f.tmp" > "$f.json"
        mv "$f.tmp" "$f"
    fi
    cat "$f" > /dev/null
    measure perfetto events "$n" "$f" "perfetto_floor (peer)" target/release/perfetto_floor "$f"
    for cmd in stats latency explain; do
        measure perfetto events "$n" "$f" "rtsleuth $cmd" "$bin" "$cmd" "$f"
    done
done

# --- trace.dat
floor="$work/tracecmd_floor"
[ -x "$floor" ] || echo "note: no $floor (bench/tracedat.sh builds it): no trace.dat peer row" >&2
for n in $dat_events; do
    f="$work/tracedat-$n.dat"
    if [ ! -s "$f" ]; then
        if [ "$(id -u)" = 0 ] && [ -d /sys/kernel/tracing ] && command -v trace-cmd > /dev/null; then
            echo "recording $f (about $n events, live) ..." >&2
            DAT_OUT="$PWD/$f.tmp" DAT_EVENTS="$n" tests/fixtures/recorded/record.sh bench_dat
            mv "$f.tmp" "$f"
            rm -f "$work/tracedat-$n-v6.dat" "$f.events"   # as bench/tracedat.sh does
        else
            echo "note: $f missing and not recordable here (needs root and tracefs): skipped" >&2
            continue
        fi
    fi
    cat "$f" > /dev/null
    [ -x "$floor" ] && measure trace.dat events "$n" "$f" "libtracecmd floor (peer)" "$floor" "$f"
    for cmd in stats latency explain; do
        measure trace.dat events "$n" "$f" "rtsleuth $cmd" "$bin" "$cmd" "$f"
    done
done

table
