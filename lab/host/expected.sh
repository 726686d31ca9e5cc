#!/usr/bin/env bash
# Writes a scenario's expected findings (JSON, on stdout) from the ground truth the injection left:
# the noise module's noise_begin/noise_end events, fifo_burst's "fifo_burst start" marks, or the
# host's measured stop for black_hole. The spike is cyclictest's break (its --tracemark line); the
# injection is the last one on the measured CPU that began before that break.
# The chain scenarios (irq_thread, timerfd) have no cyclictest: their expected file comes from
# expected_chain.awk, over fifo_burst's and the application's marks and the chain's own events.
#
# usage: expected.sh SCENARIO_DIR KERNEL
set -euo pipefail
dir=$(cd "$1" && pwd) kernel=$2
scenario=$(basename "$dir")
kv() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" "$dir/inject.txt" | head -1; }
cpu=$(kv cpu)
threshold=$(kv threshold_us)
case $scenario in
irq_thread | timerfd)
    app=irq_app
    [[ $scenario == timerfd ]] && app=timerfd_app
    exec awk -v scenario="$scenario" -v kernel="$kernel" -v cpu="$cpu" -v threshold="$threshold" \
        -v inject_us="$(kv inject_us)" -v app="$app" -v app_prio="$(kv app_prio)" \
        -v hog_prio="$(kv hog_prio)" -v irq_name="$(kv irq_name)" \
        -f "$(dirname "$0")/expected_chain.awk" "$dir/trace.txt" ;;
esac
victim_pid=$(sed -n 's/^# Thread Ids: 0*//p' "$dir/cyclictest.txt" | head -1)
cyclictest_max=$(sed -n 's/.*Max: *\([0-9]*\).*/\1/p' "$dir/cyclictest.txt" | head -1)
# The first stop is the traced phase's; later ones belong to the peers' phases.
host_stop=$(sed -n 's/host_stop_us=//p' "$dir/host_stop.txt" 2>/dev/null | head -1 || true)

awk -v scenario="$scenario" -v kernel="$kernel" -v cpu="$cpu" -v threshold="$threshold" \
    -v host_stop="$host_stop" -v victim_pid="$victim_pid" -v cyclictest_max="$cyclictest_max" \
    -f "$(dirname "$0")/expected.awk" "$dir/trace.txt"
