# Reads an ftrace text trace; see expected.sh. Fields of an event line:
#   TASK-PID [CPU] FLAGS TIMESTAMP: EVENT: DETAILS
function field(line, key,    m) {
    if (match(line, key "=[^ ]*")) return substr(line, RSTART + length(key) + 1, RLENGTH - length(key) - 1)
    return ""
}
function event_cpu(    i) {
    for (i = 1; i <= NF; i++) if ($i ~ /^\[[0-9]+\]$/) return substr($i, 2, length($i) - 2) + 0
    return -1
}
function event_ts(    i) {
    for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) return substr($i, 1, length($i) - 1)
    return ""
}
function task(    t) { t = $0; sub(/^ */, "", t); sub(/ +\[[0-9]+\].*/, "", t); return t }
/^#/ { next }
event_cpu() != cpu { next }
/ noise_begin: / {
    seq = field($0, "seq")
    begin_ts[seq] = event_ts(); begin_task[seq] = task(); begin_kind[seq] = field($0, "kind")
    begin_fn[seq] = last_hrtimer_fn
    last_seq = seq
}
/ noise_end: / { seq = field($0, "seq"); end_ts[seq] = event_ts(); actual[seq] = field($0, "actual_ns") }
/ hrtimer_expire_entry: / { last_hrtimer_fn = field($0, "function") }
/ tracing_mark_write: fifo_burst start / {
    burst_ts = event_ts(); burst_task = task(); burst_us = $NF
}
/ tracing_mark_write: hit latency threshold / && break_ts == "" {
    break_ts = event_ts(); victim = task()
    s = $0; sub(/.*\(/, "", s); sub(/ >.*/, "", s); break_us = s
}
END {
    # printk: the console flush runs with preemption disabled (vprintk_emit around
    # console_unlock) and interrupts off for each line. Under emulation a line takes about 1 ms
    # (the serial port has no baud rate), so the victim, woken between two lines, waits for the
    # whole flush: preempt_off. On a real 115200-baud port each line holds interrupts off for
    # about 13 ms and irqs_off would lead. A SCHED_OTHER task in a kernel path with no preemption
    # point is, in PRODUCT's classes, a non-preemptible section too.
    class = scenario
    if (scenario == "printk" || scenario == "kernel_path") class = "preempt_off"
    printf "{\n  \"kernel\": \"%s\",\n  \"scenario\": \"%s\",\n  \"cpu\": %d,\n  \"threshold_us\": %d,\n", kernel, scenario, cpu, threshold
    printf "  \"victim_pid\": %d,\n  \"cyclictest_max_us\": %d,\n", victim_pid, cyclictest_max
    if (break_ts == "") { printf "  \"spike\": false\n}\n"; exit }
    printf "  \"spike\": true,\n  \"victim\": \"%s\",\n  \"break_ts\": %s,\n  \"cyclictest_us\": %d,\n", victim, break_ts, break_us
    if (scenario == "black_hole") {
        printf "  \"class\": \"black_hole\",\n  \"size_us\": %d\n}\n", host_stop
    } else if (scenario == "higher_priority") {
        printf "  \"class\": \"higher_priority\",\n  \"culprit\": \"%s\",\n  \"start\": %s,\n  \"size_us\": %d\n}\n", burst_task, burst_ts, burst_us
    } else if (last_seq != "") {
        printf "  \"class\": \"%s\",\n  \"culprit\": \"%s\",\n", class, begin_task[last_seq]
        if (begin_kind[last_seq] == "hardirq") printf "  \"function\": \"%s\",\n", begin_fn[last_seq]
        printf "  \"seq\": %d,\n  \"start\": %s,\n  \"end\": %s,\n  \"size_us\": %.3f\n}\n", last_seq, begin_ts[last_seq], end_ts[last_seq], actual[last_seq] / 1000
    } else {
        printf "  \"class\": \"%s\",\n  \"injection_seen\": false\n}\n", class
    }
}
