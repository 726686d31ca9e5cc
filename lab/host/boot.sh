#!/usr/bin/env bash
# Boots one lab guest and waits for it to power off, with a deadline. The guest writes its
# results to OUT_DIR through a 9p share and its console to OUT_DIR/console.log.
#
# Acceleration: KVM when the host CPU advertises VMX or SVM and /dev/kvm opens; otherwise TCG
# with one thread (multi-threaded TCG hung during ftrace's code patching). A /dev/kvm without
# VMX/SVM in the CPU flags (a paravirtual KVM such as PVM) cannot run stock kernels.
#
# black_hole: each time the guest prints LAB-BLACKHOLE-NOW, this script stops the whole emulator
# process (SIGSTOP) for BLACK_HOLE_MS and continues it, so the guest's clock jumps with nothing
# executed in between: the signature of an SMI or a preempted vCPU. Each stop's host-measured
# length is appended to OUT_DIR/black_hole/host_stop.txt (one line per phase that asked).
#
# LAB_ARCH=aarch64 or armv7 boots an ARM guest instead, always under TCG: the `virt` machine with
# a Cortex-A57 (arm64) or Cortex-A15 (armv7, `highmem=off` so the 32-bit kernel reaches the PCI
# bus the 9p share sits on), its PL011 serial console, and no network card (the default one wants
# an EFI ROM Debian's qemu does not ship for ARM). arm64 runs on one TCG thread as x86 does; the
# armmp kernels never finish booting that way (both stop after the last initcall, before freeing
# init memory, for minutes), so armv7 runs one thread per vCPU.
#
# LAB_MEM sets the guest's memory (default 1G). LAB_REPO_SHARE=DIR also shares DIR read-only
# under the 9p tag `repo` (lab/freshboot --tests mounts the repository at its own path in the
# guest).
#
# usage: boot.sh KERNEL INITRD OUT_DIR "KERNEL_ARGS" TIMEOUT_S
set -euo pipefail
kernel=$1 initrd=$2 out=$3 args=$4 timeout_s=$5
black_hole_ms=${BLACK_HOLE_MS:-60}
mkdir -p "$out"
console=$out/console.log
: >"$console"

console_dev=ttyS0 machine=()
case ${LAB_ARCH:-x86_64} in
aarch64)
    emulator=qemu-system-aarch64 console_dev=ttyAMA0
    accel=(-accel tcg,thread=single -cpu cortex-a57) machine=(-M virt -nic none) ;;
armv7)
    emulator=qemu-system-arm console_dev=ttyAMA0
    accel=(-accel tcg,thread=multi -cpu cortex-a15) machine=(-M virt,highmem=off -nic none) ;;
*)
    emulator=qemu-system-x86_64
    if grep -qwE 'vmx|svm' /proc/cpuinfo && [[ -r /dev/kvm && -w /dev/kvm ]]; then
        accel=(-accel kvm -cpu host)
    else
        accel=(-accel tcg,thread=single -cpu max)
    fi ;;
esac
echo "$emulator ${machine[*]} ${accel[*]}" >"$out/accel.txt"
shares=(-virtfs "local,path=$out,mount_tag=out,security_model=none,id=out")
if [[ -n ${LAB_REPO_SHARE:-} ]]; then
    shares+=(-virtfs "local,path=$LAB_REPO_SHARE,mount_tag=repo,security_model=none,readonly=on,id=repo")
fi

"$emulator" "${machine[@]}" "${accel[@]}" -smp 2 -m "${LAB_MEM:-1G}" -nographic -no-reboot \
    -kernel "$kernel" -initrd "$initrd" \
    -append "console=$console_dev panic=-1 quiet loglevel=4 $args" \
    "${shares[@]}" \
    -serial "file:$console" -monitor none -display none </dev/null >/dev/null 2>&1 &
qemu=$!

deadline=$((SECONDS + timeout_s))
stops=0
while kill -0 "$qemu" 2>/dev/null; do
    if ((SECONDS > deadline)); then
        kill "$qemu"
        echo "lab: guest timed out after ${timeout_s}s (console: $console)" >&2
        exit 1
    fi
    if (($(grep -c LAB-BLACKHOLE-NOW "$console") > stops)); then
        stops=$((stops + 1))
        # Let cyclictest settle into its period first, so the stop lands between two wake-ups.
        sleep 0.5
        t0=$(date +%s%N)
        kill -STOP "$qemu"
        sleep "$(awk "BEGIN{print $black_hole_ms/1000}")"
        kill -CONT "$qemu"
        t1=$(date +%s%N)
        mkdir -p "$out/black_hole"
        echo "host_stop_us=$(((t1 - t0) / 1000))" >>"$out/black_hole/host_stop.txt"
    fi
    sleep 0.01
done
wait "$qemu" || true
grep -q LAB-DONE "$console" || { echo "lab: guest did not finish (console: $console)" >&2; exit 1; }
