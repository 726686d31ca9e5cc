# The fresh-boot check (lab/freshboot), sourced by /init in the guest instead of scenarios.sh when
# the kernel command line says lab.main=freshboot. Nothing has traced on this kernel yet, so the
# top-level ring buffer is still its boot stub (`7 (expanded: 1408)`), and rtsleuth's records are
# the first tracer users. Between the runs it looks at the buffer sizes; it never writes to tracefs.
#
# lab.order names the runs, in order (comma list):
#   top       rtsleuth record --top-level -d 1 -e sched   (first use expands the stub)
#   instance  rtsleuth record -d 1                        (a private instance)
#   top-b     rtsleuth record --top-level -b 4096 -d 1    (an explicit size, to be restored)
#   hwlat     rtsleuth hwlat --mode kernel --duration 2   (the hwlat tracer, top level; rt only)
#   The live boot (every kernel; on ARM, the dist binary on an ARM kernel's tracefs):
#   audit        rtsleuth audit, and the files it reads copied to /out/audit-root (a fixture)
#   measure-b    rtsleuth measure -a 1 -b 3000 while fifo_burst (FIFO 90) spins 5 ms bursts on
#                CPU 1: the break, its trace (a private instance) and its explanation
#   soak         rtsleuth measure -a 1 --explain-every 3000 under the same bursts
#   hwlat-user   rtsleuth hwlat --mode user (no tracer needed)
#   record       rtsleuth record -o /tmp/record.dat -- fifo_burst ... (README's "On a board": a
#                private instance for as long as the command runs)
#   explain      rtsleuth explain of that file on the guest
#   tests     the test binaries /lab/tests.list names (`NAME PATH` a line, in order; lab/freshboot
#             --tests), each run as `PATH --test-threads=1 --nocapture` with CI=true, a look
#             between two binaries; tests-reversed runs them in the reverse order. lab.repo=DIR mounts the host's repository (9p tag `repo`)
#             read-only at DIR first: the binaries, the rtsleuth binary the CLI's tests run and
#             the fixtures they read are there at the paths the build compiled in. The share is
#             cached (cache=loose; the host does not change it meanwhile), and lab.rtsleuth=PATH
#             binds the initramfs's /bin/rtsleuth (the same build) over PATH there: the CLI's
#             tests signal rtsleuth 0.8 s after starting it, and a 60 MB debug binary paged in
#             over 9p under TCG is not running its own code by then.
# lab.tracefs=unmounted makes /init leave tracefs unmounted, so the first rtsleuth mounts it.
#
# Leaves in /out, numbered in order:
#   NN-look.txt                   the buffer files (tracefs mounted at a private point if nobody
#                                 has it mounted, then unmounted again)
#   NN-RUN.{cmd,out,err,rc}       one rtsleuth run: command line, stdout, stderr, exit code
#                                 (a test binary's run is NN-test-NAME)
#   freshboot.log                 all of it in order, as a transcript
#   kernel.txt                    uname -a and /proc/cmdline

T=/sys/kernel/tracing
STEP=0

# The next step's number, in $n (a $(...) would count in a subshell).
next_step() { STEP=$((STEP + 1)); n=$(printf '%02d' $STEP); }

tracefs_mounts() { grep ' tracefs ' /proc/mounts | cut -d' ' -f2 | tr '\n' ' '; }

# The files that say how big the top-level buffer is, and whether it is still the stub.
look() {
    local n dir=$T own=
    next_step
    if [ -z "$(tracefs_mounts)" ]; then
        dir=/tmp/look
        mkdir -p $dir && mount -t tracefs nodev $dir && own=1
    fi
    {
        echo "tracefs mounts: $(tracefs_mounts)${own:+(only this look's own, at $dir)}"
        for f in buffer_size_kb buffer_total_size_kb buffer_subbuf_size_kb current_tracer tracing_on \
            tracing_thresh tracing_cpumask trace_clock hwlat_detector/width hwlat_detector/window; do
            [ -f $dir/$f ] && echo "$f: $(cat $dir/$f)"
        done
        for c in $dir/per_cpu/cpu*; do
            echo "per_cpu/${c##*/}/buffer_size_kb: $(cat $c/buffer_size_kb)"
        done
        echo "set_event: $(tr '\n' ' ' <$dir/set_event)"
        echo "instances: $(ls $dir/instances | tr '\n' ' ')"
    } >/out/$n-look.txt
    [ -n "$own" ] && umount $dir
    { echo "--- $n look"; cat /out/$n-look.txt; } >>/out/freshboot.log
}

# Runs one rtsleuth command; its output and exit code go to /out/NN-NAME.*.
run() {
    local name=$1 n rc t0 t1
    shift
    next_step
    echo "$*" >/out/$n-$name.cmd
    t0=$(cut -d' ' -f1 /proc/uptime)
    "$@" >/out/$n-$name.out 2>/out/$n-$name.err
    rc=$?
    t1=$(cut -d' ' -f1 /proc/uptime)
    echo $rc >/out/$n-$name.rc
    {
        echo "--- $n $name"
        echo "\$ $*"
        cat /out/$n-$name.out
        sed 's/^/stderr: /' /out/$n-$name.err
        echo "exit $rc ($(awk "BEGIN{print $t1 - $t0}") s)"
    } >>/out/freshboot.log
}

# Runs the test binaries /lab/tests.list names, in its order, a look between two of them. The
# environment is explicit: the kernel starts /init without PATH, and CI=true makes a live test
# that cannot run fail instead of printing `skipped:` and passing.
run_tests() {
    local name path first=1
    if [ "$1" = reversed ]; then tac /lab/tests.list; else cat /lab/tests.list; fi >/tmp/tests.list
    while read -r name path; do
        [ -n "$first" ] || look
        first=
        run "test-$name" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp TMPDIR=/tmp CI=true \
            RUST_BACKTRACE=1 "$path" --test-threads=1 --nocapture
    done </tmp/tests.list
}

# Runs "$@" while fifo_burst spins at FIFO 90 on CPU 1: 5 ms every 500 ms for 5 s, a spike the
# measuring thread (FIFO 80) cannot miss and whose cause is known.
with_bursts() {
    fifo_burst --cpu 1 --prio 90 --burst-us 5000 --period-ms 500 --duration-s 5 2>/tmp/fifo_burst.log &
    local burst=$!
    "$@"
    wait $burst
    sed 's/^/fifo_burst: /' /tmp/fifo_burst.log >>/out/freshboot.log
}

# The files `rtsleuth audit` reads, as tests/fixtures/audit/this_vm/README.md lists them, plus the
# machine and the CPU topology: a snapshot of this guest the audit's tests read back.
capture_audit_root() {
    local f dest=/out/audit-root
    for f in /proc/cmdline /proc/mounts /proc/interrupts /proc/config.gz /proc/self/timerslack_ns \
        /proc/sys/kernel/osrelease /proc/sys/kernel/version /proc/sys/kernel/arch \
        /proc/sys/kernel/sched_rt_runtime_us /proc/sys/kernel/sched_rt_period_us \
        /proc/irq/*/smp_affinity_list /proc/irq/*/effective_affinity_list \
        /sys/devices/system/cpu/online /sys/devices/system/cpu/isolated \
        /sys/devices/system/cpu/nohz_full \
        /sys/devices/system/cpu/smt/active /sys/devices/system/cpu/smt/control \
        /sys/devices/system/cpu/cpu*/topology/thread_siblings_list \
        /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor \
        /sys/devices/system/cpu/cpu*/cpuidle/state*/name \
        /sys/devices/system/cpu/cpu*/cpuidle/state*/latency \
        /sys/devices/system/cpu/cpu*/cpuidle/state*/disable \
        /sys/devices/system/cpu/cpuidle/current_driver \
        /sys/devices/system/clocksource/clocksource0/current_clocksource \
        /sys/devices/system/clocksource/clocksource0/available_clocksource \
        /sys/kernel/realtime /sys/kernel/tracing/available_tracers \
        /sys/kernel/tracing/available_events; do
        cat "$f" >/dev/null 2>&1 || continue
        mkdir -p "$dest$(dirname "$f")"
        cat "$f" >"$dest$f"
    done
}

freshboot_main() {
    local order=$(param order) repo=$(param repo) step
    if [ -n "$repo" ]; then
        mkdir -p "$repo"
        mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288,cache=loose,ro repo "$repo" ||
            echo "lab: cannot mount the repository share at $repo"
        [ -n "$(param rtsleuth)" ] && { mount -o bind /bin/rtsleuth "$(param rtsleuth)" ||
            echo "lab: cannot bind /bin/rtsleuth over $(param rtsleuth)"; }
    fi
    { uname -a; cat /proc/cmdline; } >/out/kernel.txt
    { echo "--- kernel: $(uname -a)"; echo "--- cmdline: $(cat /proc/cmdline)"; } >/out/freshboot.log
    echo "lab: freshboot on $(uname -r): ${order:-no lab.order}"
    echo "--- boot: tracefs mounts: $(tracefs_mounts)" >>/out/freshboot.log
    look
    for step in $(echo "$order" | tr ',' ' '); do
        case $step in
        top) run top rtsleuth record --top-level -d 1 -e sched -o /tmp/top.dat ;;
        instance) run instance rtsleuth record -d 1 -o /tmp/instance.dat ;;
        top-b) run top-b rtsleuth record --top-level -b 4096 -d 1 -e sched -o /tmp/top-b.dat ;;
        hwlat) run hwlat rtsleuth hwlat --mode kernel --duration 2 --cpus 1 --threshold 1000 ;;
        audit) run audit rtsleuth audit; capture_audit_root ;;
        measure-b) with_bursts run measure-b rtsleuth measure -a 1 -D 20 -b 3000 -q --out /tmp/break ;;
        soak) with_bursts run soak rtsleuth measure -a 1 -D 6 --explain-every 3000 --keep 2 -q --out /tmp/soak ;;
        hwlat-user) run hwlat-user rtsleuth hwlat --mode user --duration 2 --cpus 1 --threshold 1000 ;;
        record) run record rtsleuth record -o /tmp/record.dat -- \
            fifo_burst --cpu 1 --prio 90 --burst-us 5000 --period-ms 500 --duration-s 2 ;;
        explain) run explain rtsleuth explain --all /tmp/record.dat ;;
        tests) run_tests ;;
        tests-reversed) run_tests reversed ;;
        *) echo "lab: unknown freshboot step $step" | tee -a /out/freshboot.log ;;
        esac
        look
    done
    ls /tmp/*.dat >/dev/null 2>&1 && ls -l /tmp/*.dat >>/out/freshboot.log
    [ -n "$(param rtsleuth)" ] && umount "$(param rtsleuth)"
    [ -n "$repo" ] && umount "$repo"
    cat /out/freshboot.log
}
