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
function event_name(    i) {
    for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { s = $(i + 1); sub(/:$/, "", s); return s }
    return ""
}
/^#/ { next }
# Whether the victim is woken and not yet running (on any CPU), and whether the kernel traces
# interrupts being disabled: after the victim's wake-up only those events show that a section
# had interrupts off rather than just preemption.
/ sched_waking: / && field($0, "pid") == victim_pid { victim_waiting = 1 }
/ sched_switch: / && field($0, "next_pid") == victim_pid { victim_waiting = 0 }
/ irq_disable: / { have_preemptirq = 1 }
event_cpu() != cpu { next }
# The measured CPU's longest silence (black_hole: the host's stop), and the event that ends it.
{
    ts = event_ts()
    if (prev_ts != "" && ts - prev_ts > gap) { gap = ts - prev_ts; gap_from = prev_ts; gap_to = ts; gap_end = event_name() }
    prev_ts = ts
}
/ noise_begin: / {
    seq = field($0, "seq")
    begin_ts[seq] = event_ts(); begin_task[seq] = task(); begin_kind[seq] = field($0, "kind")
    begin_fn[seq] = last_hrtimer_fn
    begin_victim_waiting[seq] = victim_waiting
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
    # A section with interrupts off that began after the victim's wake-up holds it as a section
    # with preemption off does: the timer interrupt that proves interrupts were off has already
    # come. Only preemptirq events (irq_disable) can show it then.
    if (scenario == "irqs_off" && begin_victim_waiting[last_seq] && !have_preemptirq) class = "preempt_off"
    printf "{\n  \"kernel\": \"%s\",\n  \"scenario\": \"%s\",\n  \"cpu\": %d,\n  \"threshold_us\": %d,\n", kernel, scenario, cpu, threshold
    printf "  \"victim_pid\": %d,\n  \"cyclictest_max_us\": %d,\n", victim_pid, cyclictest_max
    if (break_ts == "") { printf "  \"spike\": false\n}\n"; exit }
    printf "  \"spike\": true,\n  \"victim\": \"%s\",\n  \"break_ts\": %s,\n  \"cyclictest_us\": %d,\n", victim, break_ts, break_us
    if (scenario == "black_hole") {
        # The stop is the CPU's longest silence. A trace proves a stopped CPU only when the
        # silence ends in an interrupt arriving (the timer's, that could not come); one that
        # ends anywhere else (the stop caught a handler or the wake-up path mid-way) looks
        # the same as code running without trace events, and the truth is then unprovable.
        provable = (gap_end == "irq_handler_entry" || gap_end == "hrtimer_expire_entry" || gap_end ~ /^[a-z_]+_entry$/ && gap_end != "softirq_entry")
        printf "  \"class\": \"black_hole\",\n  \"size_us\": %d,\n", host_stop
        printf "  \"silence\": {\"from\": %s, \"to\": %s, \"ends_with\": \"%s\"},\n", gap_from, gap_to, gap_end
        printf "  \"provable\": %s\n}\n", provable ? "true" : "false"
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
