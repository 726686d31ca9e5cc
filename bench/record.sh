#!/usr/bin/env bash
# How much the raw capture (rtsleuth-live's record::RawCapture + write_tracedat) sustains:
# every sched, irq and timer event enabled, stress-ng switching and firing timers on every
# CPU for SECONDS, the capture streaming trace_pipe_raw to disk the whole time. Prints events/s,
# MB/s of ring-buffer pages, events lost (the kernel's overrun + dropped counters) and the
# trace.dat write time, then checks `trace-cmd report` counts the same events.
#
# For comparison, the same load with nobody reading, then `trace-cmd extract` (trace-cmd
# record does not work on this kernel): extract only gets what the buffer still holds, so its
# row says how much of the SECONDS a buffer of the same size keeps, and how many it overwrote.
#
# Usage: flock /work/tracefs.lock bench/record.sh [SECONDS]     (default 5; root)
# Needs: root, tracefs, stress-ng, trace-cmd. Every tracefs file it changes is saved first and
# restored on exit, error or Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
work=bench/work
mkdir -p "$work"
T=/sys/kernel/tracing
for tool in stress-ng trace-cmd; do
    command -v $tool > /dev/null || { echo "missing tool: $tool" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
cargo build --release --quiet -p rtsleuth-live --example capture
cap=target/release/examples/capture

# The tests' lock: no live test changes tracefs while this runs.
exec 9> /tmp/rtsleuth-tracefs.lock
flock 9

files=("$T/tracing_on")
for sys in sched irq timer; do
    for e in "$T/events/$sys"/*/enable; do files+=("$e"); done
done
declare -A saved
for f in "${files[@]}"; do saved[$f]=$(sed 's/\*$//' "$f"); done
restore() {
    for f in "${files[@]}"; do echo "${saved[$f]}" > "$f" || echo "could not restore $f" >&2; done
}
trap restore EXIT
trap 'exit 130' INT TERM

echo 0 > "$T/tracing_on"
for f in "${files[@]:1}"; do echo 1 > "$f"; done
ncpu=$(nproc)
load() { stress-ng --switch "$ncpu" --timer "$ncpu" --timer-freq 100000 --timeout "$1" --quiet & }

echo "buffer: $(cat $T/buffer_size_kb) KB per CPU, $ncpu CPUs, ${secs}s of stress-ng --switch $ncpu --timer $ncpu, every sched/irq/timer event"
echo
echo "== rtsleuth capture (streaming)"
: > "$T/trace"
load "$((secs + 1))"
$cap "$T" "$secs" "$work/record.dat" | tee "$work/record.out"
wait
events=$(sed -n 's/.*events=\([0-9]*\) .*/\1/p' "$work/record.out" | head -1)
peer=$(trace-cmd report -i "$work/record.dat" 2> "$work/report.err" | grep -c '^ *.*-[0-9]* *\[[0-9]*\]' || true)
echo "trace-cmd report reads $peer events (capture counted $events); its stderr: $(head -c 200 "$work/report.err")"

echo
echo "== nobody reading, then trace-cmd extract"
: > "$T/trace"
echo 1 > "$T/tracing_on"
load "$secs"
wait
echo 0 > "$T/tracing_on"
# Counted before extract, which resets the buffer when it is done.
over=0
for c in "$T"/per_cpu/cpu*/stats; do over=$((over + $(sed -n 's/^overrun: //p' "$c"))); done
t0=$(date +%s.%N)
(cd "$work" && trace-cmd extract -o extract.dat > /dev/null 2>&1)
t1=$(date +%s.%N)
kept=$(trace-cmd report -i "$work/extract.dat" 2> /dev/null | grep -c '^ *.*-[0-9]* *\[[0-9]*\]' || true)
echo "extract kept $kept events, overwrote $over, extract took $(echo "$t0 $t1" | awk '{printf "%.3f", $2-$1}') s"
: > "$T/trace"
