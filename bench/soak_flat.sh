#!/usr/bin/env bash
# A long `measure --explain-every` soak under a known load, watched from outside: does its
# memory and disk stay flat while it explains spike after spike?
#
# Load: lab/fifo_burst at SCHED_FIFO 90 on CPU $CPU, a $BURST_US us burst every $PERIOD_MS ms,
# above the measuring thread (SCHED_FIFO 80, same CPU). Every $SAMPLE s it prints the
# process's VmRSS and VmHWM, the out directory's size and the findings file's lines; at the
# end the run's spike counts and its three largest causes.
#
# Needs root and gcc. Env: SECS (3600), CPU (0), THRESHOLD_US (1000), BURST_US (1800),
# PERIOD_MS (3000), DRIFT_US (0), KEEP (10), SAMPLE (60), OUT (a temporary directory, removed at the end
# unless given), RTSLEUTH (target/release/rtsleuth, built if absent).
set -euo pipefail
cd "$(dirname "$0")/.."

SECS=${SECS:-3600}
CPU=${CPU:-0}
THRESHOLD_US=${THRESHOLD_US:-1000}
BURST_US=${BURST_US:-1800}
PERIOD_MS=${PERIOD_MS:-3000}
KEEP=${KEEP:-10}
SAMPLE=${SAMPLE:-60}
RTSLEUTH=${RTSLEUTH:-target/release/rtsleuth}

[ -x "$RTSLEUTH" ] || cargo build --release -p rtsleuth
work=$(mktemp -d)
keep_out=${OUT:+yes}
OUT=${OUT:-$work/soak}
cleanup() {
    kill "${burst:-}" "${soak:-}" 2> /dev/null || true
    wait 2> /dev/null || true
    rm -rf "$work"
    [ -n "$keep_out" ] || rm -rf "$OUT"
}
trap cleanup EXIT INT TERM
gcc -O2 -Wall -o "$work/fifo_burst" lab/fifo_burst/fifo_burst.c
"$work/fifo_burst" --cpu "$CPU" --prio 90 --burst-us "$BURST_US" --period-ms "$PERIOD_MS" \
    --drift-us "${DRIFT_US:-0}" --duration-s $((SECS + 5)) > /dev/null &
burst=$!
"$RTSLEUTH" measure -a "$CPU" -p 80 -D "$SECS" -q --json --explain-every "$THRESHOLD_US" \
    --keep "$KEEP" --out "$OUT" > "$work/soak.json" &
soak=$!

printf '%8s %10s %10s %10s %8s\n' elapsed_s rss_kb hwm_kb out_kb lines
start=$(date +%s)
while kill -0 "$soak" 2> /dev/null; do
    sleep "$SAMPLE"
    status=/proc/$soak/status
    [ -r "$status" ] || break
    rss=$(awk '/^VmRSS/ {print $2}' "$status" 2> /dev/null || echo -)
    hwm=$(awk '/^VmHWM/ {print $2}' "$status" 2> /dev/null || echo -)
    out_kb=$(du -sk "$OUT" | cut -f1)
    lines=$(wc -l < "$OUT/findings.jsonl")
    printf '%8d %10s %10s %10s %8s\n' $(($(date +%s) - start)) "$rss" "$hwm" "$out_kb" "$lines"
done
wait "$soak"
python3 - "$work/soak.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["spikes"]
print("spikes: seen %d, explained %d, unexplained %d, missed %d, not recorded %.1f s"
      % (s["seen"], s["explained"], s["unexplained"], s["missed"], s["blind_s"]))
for c in s["by_cause"][:3]:
    print("  %-16s %-24s %5d spikes %12.1f us" % (c["kind"], c["culprit"], c["spikes"], c["total_us"]))
PY
