# The chain scenarios' expected findings (irq_thread, timerfd; see expected.sh), from the trace's
# own events on the measured CPU: fifo_burst's marks and the switches that end its bursts, the
# application's marks and, for each mark, the chain that ended the application's longest wait
# before it (the application's switch-out and the wake-up of it that lie furthest apart):
#   irq_thread  irq_handler_entry irq=N -> sched_waking irq/N-... -> the thread runs ->
#               sched_waking of the application by the thread -> the application runs
#   timerfd     local_timer_entry -> softirq_raise vec=8 -> sched_waking ktimers/CPU ->
#               ktimers runs -> softirq_entry vec=8 -> hrtimer_expire_entry timerfd_tmrproc ->
#               sched_waking of the application -> the application runs
# Each instant is the last such event before the next one in the chain. Nothing here comes from
# rtsleuth.
# Fields of an event line:  TASK-PID [CPU] FLAGS TIMESTAMP: EVENT: DETAILS
function field(line, key,    m) {
    if (match(line, "[ :]" key "=[^ ]*")) return substr(line, RSTART + length(key) + 2, RLENGTH - length(key) - 2)
    return ""
}
function task(    t) { t = $0; sub(/^ */, "", t); sub(/ +\[[0-9]+\].*/, "", t); return t }
function pid_of(t) { sub(/.*-/, "", t); return t + 0 }
function json_str(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return "\"" s "\"" }
/^#/ { next }
{
    cpu_i = 0
    for (i = 1; i <= NF; i++) if ($i ~ /^\[[0-9]+\]$/) { cpu_i = i; break }
    if (!cpu_i || substr($cpu_i, 2, length($cpu_i) - 2) + 0 != cpu) next
    flags = $(cpu_i + 1)
    ts = $(cpu_i + 2); sub(/:$/, "", ts)
    ev = $(cpu_i + 3); sub(/:$/, "", ev)
    n++
    E_ts[n] = ts; E_ev[n] = ev; E_task[n] = task(); E_flags[n] = flags
}
ev == "tracing_mark_write" && / fifo_burst start / {
    E_ev[n] = "burst"; hog = E_task[n]; burst_us = $NF
    nb++; B_start[nb] = ts; B_end[nb] = ""
}
ev == "tracing_mark_write" && $0 ~ (" " app " late ") {
    E_ev[n] = "late"; victim = E_task[n]
    s = $0; sub(".* " app " late ", "", s); split(s, w, " ")
    nm++; M_i[nm] = n; M_late[nm] = w[1]
    for (k = 2; k < length(w); k += 2) { if (w[k] == "seq") M_seq[nm] = w[k + 1]; if (w[k] == "due") M_due[nm] = w[k + 1] }
}
ev == "sched_waking" { E_pid[n] = field($0, "pid"); E_comm[n] = field($0, "comm") }
ev == "sched_switch" {
    E_pid[n] = field($0, "next_pid"); E_prev[n] = field($0, "prev_pid"); E_state[n] = field($0, "prev_state")
    if (hog != "" && nb && B_end[nb] == "" && E_prev[n] == pid_of(hog) && E_state[n] != "R" && E_state[n] != "R+")
        B_end[nb] = ts
}
ev == "irq_handler_entry" {
    E_irq[n] = field($0, "irq")
    if (field($0, "name") == irq_name) irq = E_irq[n]
}
ev == "softirq_entry" || ev == "softirq_raise" { E_vec[n] = field($0, "vec") }
ev == "hrtimer_expire_entry" { E_fn[n] = field($0, "function") }
# The last event of kind `what` before index i (and after `lo`) that `pid` (if given) matches.
# "sched_switch_out" is a switch away from `pid` (its prev_pid).
function back(i, what, pid, lo) {
    for (i--; i > lo; i--) {
        if (what == "sched_switch_out" && E_ev[i] == "sched_switch" && E_prev[i] == pid) return i
        if (E_ev[i] == what && (pid == "" || E_pid[i] == pid)) return i
    }
    return 0
}
function fwd(i, what, pid, hi) {
    for (i++; i <= hi; i++) if (E_ev[i] == what && (pid == "" || E_pid[i] == pid)) return i
    return 0
}
function inst(name, i) {
    if (!i) return sprintf("      \"%s\": null", name)
    return sprintf("      \"%s\": {\"ts\": %s, \"task\": %s, \"flags\": %s}", name, E_ts[i], json_str(E_task[i]), json_str(E_flags[i]))
}
END {
    vpid = pid_of(victim); hpid = pid_of(hog)
    printf "{\n  \"kernel\": \"%s\",\n  \"scenario\": \"%s\",\n  \"cpu\": %d,\n  \"threshold_us\": %d,\n  \"inject_us\": %d,\n", kernel, scenario, cpu, threshold, inject_us
    printf "  \"trace_clock\": \"mono\",\n  \"victim\": %s,\n  \"victim_pid\": %d,\n  \"victim_prio\": %d,\n", json_str(victim), vpid, app_prio
    printf "  \"culprit\": %s,\n  \"hog_pid\": %d,\n  \"hog_prio\": %d,\n  \"burst_us\": %d,\n", json_str(hog), hpid, hog_prio, burst_us
    printf "  \"bursts\": ["
    for (b = 1; b <= nb; b++) printf "%s\n    {\"start\": %s, \"end\": %s}", (b > 1 ? "," : ""), B_start[b], B_end[b] == "" ? "null" : B_end[b]
    printf "\n  ],\n"
    # The helper thread the chain runs through: the IRQ thread or ktimers/CPU.
    if (scenario == "irq_thread") { helper_comm = "irq/" irq "-" substr(irq_name, 1, 15 - length("irq/" irq "-")) }
    else helper_comm = "ktimers/" cpu
    for (i = 1; i <= n && helper == ""; i++) if (E_ev[i] == "sched_waking" && E_comm[i] == helper_comm) helper = E_pid[i]
    if (scenario == "irq_thread") printf "  \"irq\": %d,\n  \"irq_name\": %s,\n", irq, json_str(irq_name)
    printf "  \"helper\": %s,\n  \"helper_pid\": %d,\n", json_str(helper_comm "-" helper), helper
    worst = 0
    for (m = 1; m <= nm; m++) if (!worst || M_late[m] + 0 > M_late[worst] + 0) worst = m
    printf "  \"spikes\": ["
    for (m = 1; m <= nm; m++) {
        mi = M_i[m]
        printf "%s\n    {\n      \"seq\": %d,\n      \"late_us\": %d,\n      \"mark_ts\": %s,\n", (m > 1 ? "," : ""), M_seq[m], M_late[m], E_ts[mi]
        if (scenario == "irq_thread") {
            start = E_ts[mi] - M_late[m] / 1e6
            printf "      \"read_start\": %.6f,\n", start
        } else {
            start = M_due[m] / 1e9
            printf "      \"due\": %.9f,\n", start
        }
        inb = 0
        for (b = 1; b <= nb; b++) if (B_start[b] <= E_ts[mi] && (B_end[b] == "" || B_end[b] + 0 >= start)) inb = b
        printf "      \"burst\": %s,\n", inb ? inb - 1 : "null"
        if (m == worst) W_burst = inb
        # The application's longest wait before its mark, from its last switch-out before
        # `start` on: the wake-up furthest from the switch-out before it.
        for (k = 1; k <= n && E_ts[k] + 0 < start; k++) ;
        k = back(k, "sched_switch_out", vpid, 0)
        wk = 0; out = 0; best = -1
        for (i = k ? k : 1; i < mi; i++) {
            if (E_ev[i] == "sched_switch" && E_prev[i] == vpid) last_out = i
            if (E_ev[i] == "sched_waking" && E_pid[i] == vpid && last_out && E_ts[i] - E_ts[last_out] > best) {
                best = E_ts[i] - E_ts[last_out]; wk = i; out = last_out
            }
        }
        last_out = 0
        run = wk ? fwd(wk, "sched_switch", vpid, mi) : 0
        # The helper's run that woke the application, and the wake-up that started that run.
        hrun = wk ? back(wk, "sched_switch", helper, 0) : 0
        hwk = hrun ? back(hrun, "sched_waking", helper, 0) : 0
        printf "%s,\n", inst("victim_blocks", out)
        if (scenario == "irq_thread") {
            hard = hwk ? back(hwk, "irq_handler_entry", "", 0) : 0
            while (hard && E_irq[hard] != irq) hard = back(hard, "irq_handler_entry", "", 0)
            printf "%s,\n%s,\n%s,\n", inst("irq_entry", hard), inst("helper_woken", hwk), inst("helper_runs", hrun)
        } else {
            raise = hwk ? back(hwk, "softirq_raise", "", 0) : 0
            while (raise && E_vec[raise] != 8) raise = back(raise, "softirq_raise", "", 0)
            lte = raise ? back(raise, "local_timer_entry", "", 0) : 0
            soft = back(wk, "softirq_entry", "", hrun)
            while (soft && E_vec[soft] != 8) soft = back(soft, "softirq_entry", "", hrun)
            cb = back(wk, "hrtimer_expire_entry", "", hrun)
            while (cb && E_fn[cb] != "timerfd_tmrproc") cb = back(cb, "hrtimer_expire_entry", "", hrun)
            printf "%s,\n%s,\n%s,\n%s,\n%s,\n%s,\n", inst("local_timer_entry", lte), inst("softirq_raise", raise), inst("helper_woken", hwk), inst("helper_runs", hrun), inst("softirq_entry", soft), inst("timerfd_tmrproc", cb)
        }
        printf "%s,\n%s\n    }", inst("victim_woken", wk), inst("victim_runs", run)
    }
    printf "\n  ],\n"
    # The worst spike in the fields every lab fixture has (crates/rtsleuth-analyze/tests/lab.rs):
    # the application is the victim, its mark is the break, its own figure stands where
    # cyclictest's does, and the class is fifo_burst's over the helper (higher_priority), with
    # fifo_burst's burst as the section: from its mark to the switch that ended it.
    if (!worst) { printf "  \"spike\": false\n}\n"; exit }
    wb = W_burst
    printf "  \"worst_seq\": %d,\n  \"spike\": true,\n  \"class\": \"higher_priority\",\n", M_seq[worst]
    printf "  \"break_ts\": %s,\n  \"cyclictest_us\": %d,\n", E_ts[M_i[worst]], M_late[worst]
    if (wb && B_end[wb] != "") printf "  \"start\": %s,\n  \"end\": %s,\n  \"size_us\": %.0f\n}\n", B_start[wb], B_end[wb], (B_end[wb] - B_start[wb]) * 1e6
    else printf "  \"injection_seen\": false\n}\n"
}
