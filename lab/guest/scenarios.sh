# The lab's scenarios, sourced by /init in the guest. Each scenario injects one cause class on
# CPU 1 while cyclictest measures CPU 1, and leaves in /out/SCENARIO:
#   trace.txt, trace.dat  the event trace up to cyclictest's break (-b --tracemark)
#   cyclictest.txt        cyclictest's own output
#   latency_tracer.txt    the kernel latency tracer's trace, where this kernel has that tracer
#   rtla.txt              `rtla timerlat top -a` on the same injection, where the kernel has timerlat
#   rtla_sched/           the same rtla run with `-e sched -e irq` (rtla.txt, timerlat_trace.txt)
#   timerlat_dat/         the timerlat tracer with osnoise and sched events (trace.txt, trace.dat)
#   function_graph.txt    (hardirq only) the timer interrupt's call graph on CPU 1 while injecting
#   hwlat_{kernel,user}.json (black_hole only) rtsleuth hwlat while the host stops the emulator
#   hwlat_trace.txt       (black_hole only) the kernel hwlat tracer's own output for one more stop
#   inject.txt            what was injected (kind, cpu, us, pid) for the host's expected file
# The chain scenarios (irq_thread, timerfd: issue 27) have no cyclictest: an application of their
# own is the victim, and they have the trace phase only (phase_chain): trace.txt, trace.dat and
# inject.txt, which also holds the application's and fifo_burst's own summaries.
# Durations are long (30 ms by default, breaking at 15 ms) because emulation (TCG) alone causes
# 1-5 ms of noise, and up to 8 ms when the host is busy.

T=/sys/kernel/tracing
CPU=1
INJECT_US=${LAB_INJECT_US:-30000}
THRESHOLD_US=${LAB_THRESHOLD_US:-15000}
NOISE=/proc/rtsleuth_noise
# The timer interrupt's handler, whose call graph phase_graph records: the local APIC timer's on
# x86; on ARM the generic timer's (arch_timer_handler_virt under qemu's virt machine, _phys where
# the kernel runs at EL2), which calls hrtimer_interrupt as the APIC's does.
case $(uname -m) in
x86_64) TIMER_HANDLER=__sysvec_apic_timer_interrupt ;;
*) TIMER_HANDLER='arch_timer_handler_*' ;;
esac
# The measuring thread, as in every phase that needs one: FIFO 80 on CPU 1, 1 ms period.
CYCLICTEST="cyclictest -m -q -p 80 -i 1000 -a $CPU -t 1"

have_tracer() { grep -qw "$1" $T/available_tracers; }
have_events() { [ -d "$T/events/$1" ]; }

# Starts from a known tracefs state: nothing traced, nop tracer on both of the guest's CPUs
# (boot.sh gives it two), no graph filter or threshold, empty buffer. Every phase begins here,
# so none has to undo its own settings.
reset_tracing() {
    echo 0 >$T/tracing_on
    echo nop >$T/current_tracer
    echo >$T/set_event
    echo 3 >$T/tracing_cpumask
    echo >$T/set_graph_function 2>/dev/null
    echo 0 >$T/options/funcgraph-abstime 2>/dev/null
    echo 0 >$T/tracing_thresh
    echo local >$T/trace_clock
    echo 1024 >$T/buffer_size_kb
    echo 1 >$T/options/overwrite
    echo >$T/trace
}

enable_events() {
    for sys in sched irq timer irq_vectors workqueue rtsleuth_noise preemptirq; do
        have_events $sys && echo 1 >$T/events/$sys/enable
    done
    # ARM's IPIs are one interrupt (`IPI`) whose kind only ipi_entry/ipi_exit name, where x86
    # names each by its vector (irq_vectors).
    if [ "$(uname -m)" != x86_64 ]; then
        for e in ipi_entry ipi_exit; do
            [ -d $T/events/ipi/$e ] && echo 1 >$T/events/ipi/$e/enable
        done
    fi
}

# Starts the injection of scenario $1 in the background; prints nothing. kernel_path and
# higher_priority are user-space loads; the rest are the noise module's control files.
start_injection() {
    case $1 in
    hardirq | irqs_off | preempt_off | softirq | printk)
        echo "$CPU $INJECT_US 250 40" >$NOISE/$1 ;;
    higher_priority)
        fifo_burst --cpu $CPU --prio 90 --burst-us "$INJECT_US" --period-ms 250 --duration-s 10 \
            --drift-us 700 2>/tmp/fifo_burst.log &
        echo $! >/tmp/injector.pid ;;
    kernel_path)
        taskset -c $CPU sh -c "while :; do echo '$CPU $INJECT_US' >$NOISE/kernel_path; usleep 250000; done" &
        echo $! >/tmp/injector.pid ;;
    black_hole)
        # The host stops the whole emulator when it reads this line on the console; stops.txt
        # names the phase of each stop, in the order of the host's host_stop.txt lines.
        echo "${PHASE:-trace}" >>/out/black_hole/stops.txt
        echo "LAB-BLACKHOLE-NOW" >/dev/console ;;
    esac
}

# Ends whatever the scenario started. The module has no stop command: unloading it ends a run
# within one section, and loading it again readies the next phase. Callers read the trace
# first, because after rmmod the module's symbols and event format are gone.
stop_injection() {
    [ -f /tmp/injector.pid ] && kill "$(cat /tmp/injector.pid)" 2>/dev/null
    rm -f /tmp/injector.pid
    wait 2>/dev/null
    rmmod rtsleuth_noise && insmod /lib/modules/rtsleuth_noise.ko
}

# The latency tracer that names the culprit of each class, where the kernel has one.
latency_tracer_for() {
    case $1 in
    irqs_off | hardirq | printk) echo irqsoff ;;
    preempt_off | softirq) echo preemptoff ;;
    higher_priority | kernel_path) echo wakeup_rt ;;
    esac
}

phase_trace() {
    local s=$1 dir=/out/$1
    reset_tracing
    enable_events
    echo 1 >$T/tracing_on
    $CYCLICTEST -D 10 -b "$THRESHOLD_US" --tracemark >$dir/cyclictest.txt 2>&1 &
    local ct=$!
    sleep 1
    start_injection "$s"
    wait $ct
    echo 0 >$T/tracing_on
    cat $T/trace >$dir/trace.txt
    (cd $dir && trace-cmd extract -o trace.dat >/dev/null 2>&1) || echo "lab: trace-cmd extract failed"
    stop_injection
}

phase_latency_tracer() {
    local s=$1 dir=/out/$1 tracer
    tracer=$(latency_tracer_for "$s")
    [ -n "$tracer" ] && have_tracer "$tracer" || return 0
    [ "$s" = black_hole ] && return 0
    reset_tracing
    echo "$tracer" >$T/current_tracer
    echo 0 >$T/tracing_max_latency
    echo 1 >$T/tracing_on
    if [ "$tracer" = wakeup_rt ]; then
        # wakeup_rt measures an RT task's wake-up; cyclictest provides it.
        $CYCLICTEST -D 3 >/dev/null 2>&1 &
        local ct=$!
        start_injection "$s"
        wait $ct
    else
        start_injection "$s"
        sleep 2
    fi
    echo 0 >$T/tracing_on
    cat $T/trace >$dir/latency_tracer.txt
    stop_injection
}

# The call graph of every timer interrupt on CPU 1 for a second of injection: most calls are
# the tick's few microseconds, the injected ones carry the noise callback, which is what
# `rtsleuth graph --func` must single out. Graph tracing is limited to that one function and CPU
# because under emulation tracing every function would take minutes.
phase_graph() {
    local s=$1 dir=/out/$1
    [ "$s" = hardirq ] && have_tracer function_graph || return 0
    reset_tracing
    # The injected callback's busy loop calls ktime_get() thousands of times, four lines each:
    # on arm64 1 MB per CPU held only the slow call's end, its opening overwritten.
    echo 4096 >$T/buffer_size_kb
    echo $((1 << CPU)) >$T/tracing_cpumask
    echo "$TIMER_HANDLER" >$T/set_graph_function
    echo function_graph >$T/current_tracer
    echo 1 >$T/options/funcgraph-abstime 2>/dev/null
    echo 1 >$T/tracing_on
    start_injection "$s"
    sleep 1
    echo 0 >$T/tracing_on
    cat $T/trace >$dir/function_graph.txt
    stop_injection
}

# rtla takes seconds to set up under emulation (its -d counts from when it measures), and a
# single black-hole stop must come after that: wait until some instance runs timerlat.
wait_for_timerlat() {
    local i=0
    while [ $i -lt 300 ]; do
        grep -qs timerlat $T/current_tracer $T/instances/*/current_tracer && return 0
        usleep 100000
        i=$((i + 1))
    done
    echo "lab: rtla did not start timerlat within 30 s"
}

# `rtla timerlat top -a` on a fresh injection of scenario $1, in directory $3, as phase $2 (the
# black-hole stop's name in stops.txt); further arguments go to rtla.
run_rtla() {
    local s=$1 phase=$2 dir=$3
    shift 3
    reset_tracing
    (cd $dir && rtla timerlat top -q -a $((THRESHOLD_US)) -c $CPU -P f:80 -d 10 "$@" >rtla.txt 2>&1) &
    local r=$!
    wait_for_timerlat
    sleep 1
    PHASE=$phase start_injection "$s"
    wait $r
    stop_injection
}

phase_rtla() {
    have_tracer timerlat || return 0
    run_rtla "$1" rtla /out/$1
}

# The same rtla run with the scheduler and irq events in its trace instance: rtla's own trace
# has only the timerlat samples and osnoise's events, which name a thread but not its priority
# or who woke the victim. Separate from phase_rtla, so that run and its trace stay as rtla's
# defaults make them.
phase_rtla_sched() {
    have_tracer timerlat || return 0
    mkdir -p /out/$1/rtla_sched
    run_rtla "$1" rtla_sched /out/$1/rtla_sched -e sched -e irq
}

# The pid of timerlat's kernel thread on the measured CPU (timerlat/CPU), empty if none runs.
timerlat_pid() {
    grep -lx "timerlat/$CPU" /proc/[0-9]*/comm 2>/dev/null | head -1 | cut -d/ -f3
}

# The timerlat tracer itself on a fresh injection, saved as text and as trace.dat: rtla keeps
# only text, and rtsleuth's trace.dat reader decodes timerlat's records and osnoise's events from
# their binary fields. A private instance leaves the top-level buffer alone; osnoise/cpus and
# stop_tracing_total_us are global, so both are put back afterwards. The threshold stops the
# buffer at the spike's thread sample, as rtla -a does.
phase_timerlat_dat() {
    local s=$1 dir=/out/$1/timerlat_dat name=rtsleuth_timerlat
    local I=$T/instances/$name
    have_tracer timerlat || return 0
    reset_tracing
    mkdir -p $dir
    local cpus total pid i=0
    cpus=$(cat $T/osnoise/cpus)
    total=$(cat $T/osnoise/stop_tracing_total_us)
    echo $CPU >$T/osnoise/cpus
    echo "$THRESHOLD_US" >$T/osnoise/stop_tracing_total_us
    mkdir $I
    echo 1024 >$I/buffer_size_kb
    echo 1 >$I/events/osnoise/enable
    echo 1 >$I/events/sched/enable
    echo timerlat >$I/current_tracer
    # The kernel starts timerlat's thread at FIFO 95, above fifo_burst (90); at 80, as cyclictest
    # and rtla -P f:80 run, a higher-priority task can delay it. The thread sets FIFO 95 itself
    # as it starts, hence the pause. busybox has no chrt: lab/run stages util-linux's.
    while [ -z "$(timerlat_pid)" ] && [ $i -lt 50 ]; do usleep 100000; i=$((i + 1)); done
    usleep 200000
    pid=$(timerlat_pid)
    chrt -f -p 80 "$pid" >/dev/null || echo "lab: cannot set timerlat/$CPU ($pid) to FIFO 80"
    echo >$I/trace
    sleep 1
    PHASE=timerlat_dat start_injection "$s"
    # stop_tracing_total_us turns the instance's tracing_on off at the spike; 10 s as rtla -d 10.
    i=0
    while [ "$(cat $I/tracing_on)" = 1 ] && [ $i -lt 100 ]; do usleep 100000; i=$((i + 1)); done
    [ $i -lt 100 ] || echo "lab: timerlat did not stop within 10 s"
    # The threshold only stops the buffer; writing 0 also stops timerlat's thread.
    echo 0 >$I/tracing_on
    cat $I/trace >$dir/trace.txt
    (cd $dir && trace-cmd extract -B $name -o trace.dat >/dev/null 2>&1) ||
        echo "lab: trace-cmd extract -B $name failed"
    stop_injection
    # trace-cmd extract (3.1.6) removes the instance it extracted, with its tracer, when it
    # ends; the instance is left only when extract failed early.
    if [ -d $I ]; then
        echo nop >$I/current_tracer
        rmdir $I || echo "lab: cannot remove instance $name"
    fi
    echo "$cpus" >$T/osnoise/cpus
    echo "$total" >$T/osnoise/stop_tracing_total_us
}

# rtsleuth's own hardware-latency detector against a black hole: the kernel's hwlat tracer where
# this kernel has it, and the user-space detector everywhere, each while the host stops the
# emulator once. Both must report a gap of about the stop's length.
phase_hwlat() {
    local s=$1 dir=/out/$1 mode
    [ "$s" = black_hole ] || return 0
    for mode in kernel user; do
        [ $mode = kernel ] && ! have_tracer hwlat && continue
        reset_tracing
        rtsleuth hwlat --mode $mode --cpus $CPU --duration 6 --threshold 1000 --json \
            >$dir/hwlat_$mode.json 2>$dir/hwlat_$mode.err &
        local h=$!
        sleep 2
        PHASE=hwlat_$mode start_injection "$s"
        wait $h
        sleep 1
    done
    # The kernel's own hwlat report of one more stop, kept as the kernel printed it, so the
    # tests can check rtsleuth's parser of that output against a real kernel.
    have_tracer hwlat || return 0
    reset_tracing
    echo $((1 << CPU)) >$T/tracing_cpumask
    echo 1000 >$T/tracing_thresh
    echo hwlat >$T/current_tracer
    echo 1 >$T/tracing_on
    sleep 2
    PHASE=hwlat_trace start_injection "$s"
    sleep 4
    echo 0 >$T/tracing_on
    cat $T/trace >$dir/hwlat_trace.txt
}

# The number of the interrupt named $1 in /proc/interrupts (its last column), empty if none.
irq_of() {
    awk -v name="$1" '$NF == name { sub(":", "", $1); print $1; exit }' /proc/interrupts
}

# The chain scenarios (issue 27): an interrupt reaches a SCHED_FIFO application through a
# thread that a lower-priority fifo_burst holds off, while the application outranks fifo_burst.
#   irq_thread  irq_app (FIFO 70, CPU 1) preads a file on the 9p results share every 1 ms; each
#               read is a 9p RPC whose reply is the virtio interrupt (virtio0-requests), pinned
#               to CPU 1, so its thread irq/N-virtio0- (FIFO 50) wakes the app; fifo_burst
#               spins at FIFO 60, between the two.
#   timerfd     timerfd_app (FIFO 50, CPU 1) reads a 1 ms CLOCK_MONOTONIC timerfd; on PREEMPT_RT
#               the timerfd's (soft) hrtimer expires in ktimers/1 (FIFO 1); fifo_burst spins at
#               FIFO 10, between the two.
# The application writes "<app> late <us> ..." to trace_marker for each wake-up later than the
# threshold. The trace clock is mono, the applications' CLOCK_MONOTONIC, so timerfd_app's due
# times are trace stamps. No cyclictest: the trace runs for a fixed time. The application starts
# with it, fifo_burst a second later: 30 ms bursts every 500.7 ms for 3 s, five in all. Tracing
# stops 2.15 s after fifo_burst started, 120 ms after its fourth burst ended and before its
# fifth: the last burst runs into fifo_burst's exit (3 ms more of it under emulation), so the
# traced bursts all end in a sleep. The 1 MB buffer keeps the last 0.8-2 s, the last bursts.
phase_chain() {
    local s=$1 dir=/out/$1 irq= affinity= probe=/out/irq_app.probe app hog
    reset_tracing
    echo mono >$T/trace_clock
    enable_events
    echo "kind=$s cpu=$CPU inject_us=$INJECT_US threshold_us=$THRESHOLD_US period_ms=500 trace_clock=mono" \
        >$dir/inject.txt
    case $s in
    irq_thread)
        hog=60
        irq=$(irq_of virtio0-requests)
        [ -n "$irq" ] || { echo "lab: no virtio0-requests interrupt"; return 0; }
        affinity=$(cat /proc/irq/$irq/smp_affinity_list)
        echo $CPU >/proc/irq/$irq/smp_affinity_list || echo "lab: cannot pin irq $irq to CPU $CPU"
        echo "irq_app probe" >$probe
        # /proc/PID/comm shows a kthread's full name (irq/25-virtio0-requests); the trace shows
        # the 15-character comm (irq/25-virtio0-).
        echo "irq=$irq irq_name=virtio0-requests irq_affinity_was=$affinity" \
            "irq_thread_pid=$(grep -l "^irq/$irq-" /proc/[0-9]*/comm | head -1 | cut -d/ -f3)" \
            "app_prio=70 hog_prio=$hog" >>$dir/inject.txt
        grep " /out " /proc/mounts | sed 's/^/mount: /' >>$dir/inject.txt
        echo 1 >$T/tracing_on
        # Every 5 ms: each read is two 9p RPCs, about 70 events on CPU 1 with the lock hand-offs
        # between the app and the thread; at 1 ms the buffer held 0.4 s, one burst.
        irq_app --cpu $CPU --prio 70 --file $probe --period-us 5000 --duration-s 5 \
            --mark-us "$THRESHOLD_US" 2>/tmp/app.log &
        app=$! ;;
    timerfd)
        hog=10
        echo "app_prio=50 hog_prio=$hog timerfd_period_us=1000" \
            "ktimers_pid=$(grep -lx "ktimers/$CPU" /proc/[0-9]*/comm | head -1 | cut -d/ -f3)" \
            >>$dir/inject.txt
        echo 1 >$T/tracing_on
        timerfd_app --cpu $CPU --prio 50 --period-us 1000 --duration-s 5 \
            --mark-us "$THRESHOLD_US" 2>/tmp/app.log &
        app=$! ;;
    esac
    sleep 1
    fifo_burst --cpu $CPU --prio $hog --burst-us "$INJECT_US" --period-ms 500 --duration-s 3 \
        --drift-us 700 2>/tmp/fifo_burst.log &
    hog=$!
    usleep 2150000
    echo 0 >$T/tracing_on
    wait $hog $app
    cat $T/trace >$dir/trace.txt
    (cd $dir && trace-cmd extract -o trace.dat >/dev/null 2>&1) || echo "lab: trace-cmd extract failed"
    cat /tmp/fifo_burst.log /tmp/app.log >>$dir/inject.txt
    rm -f /tmp/fifo_burst.log /tmp/app.log $probe
    [ -n "$affinity" ] && echo "$affinity" >/proc/irq/$irq/smp_affinity_list
}

run_scenario() {
    local s=$1 dir=/out/$1
    mkdir -p $dir
    echo "lab: scenario $s on $LAB_KERNEL"
    case $s in
    irq_thread | timerfd) phase_chain "$s"; reset_tracing; return ;;
    esac
    phase_trace "$s"
    echo "kind=$s cpu=$CPU inject_us=$INJECT_US threshold_us=$THRESHOLD_US" >$dir/inject.txt
    [ -f /tmp/fifo_burst.log ] && cat /tmp/fifo_burst.log >>$dir/inject.txt && rm /tmp/fifo_burst.log
    phase_latency_tracer "$s"
    phase_graph "$s"
    phase_rtla "$s"
    phase_rtla_sched "$s"
    phase_timerlat_dat "$s"
    phase_hwlat "$s"
    reset_tracing
}

lab_main() {
    echo "lab: kernel $(uname -r) ($LAB_KERNEL), cmdline: $(cat /proc/cmdline)"
    { uname -a; cat /proc/cmdline; cat $T/available_tracers; } >/out/kernel.txt
    rtsleuth audit --json >/out/audit.json 2>/dev/null
    insmod /lib/modules/rtsleuth_noise.ko || echo "lab: insmod rtsleuth_noise failed"
    for s in "$@"; do run_scenario "$s"; done
    rmmod rtsleuth_noise
}
