#!/usr/bin/env bash
# Builds the lab's tracer kernel from Debian's linux-source package: x86_64 defconfig,
# kvm_guest.config and tracers.config. The result is cached (bzImage, the build tree for
# out-of-tree modules); a second run with the same source and fragment returns at once.
#
# usage: build-tracer-kernel.sh SOURCE_TARBALL OUT_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tarball=$1 out=$2
# Keyed on the contents (not the paths) of the source and the fragment.
stamp="$out/.built-$(cat "$tarball" "$here/tracers.config" | sha256sum | cut -c1-16)"
if [[ -f $stamp ]]; then
    echo "tracer kernel: cached in $out"
    exit 0
fi
rm -rf "$out" && mkdir -p "$out"
echo "tracer kernel: unpacking $(basename "$tarball")"
tar -C "$out" -xf "$tarball"
src=$(find "$out" -mindepth 1 -maxdepth 1 -type d | head -1)
cd "$src"
make -s x86_64_defconfig
make -s kvm_guest.config
scripts/kconfig/merge_config.sh -m .config "$here/tracers.config" >/dev/null
make -s olddefconfig
# merge_config only warns when a fragment value is dropped; a missing tracer must fail here.
for opt in IRQSOFF_TRACER PREEMPT_TRACER FUNCTION_GRAPH_TRACER HWLAT_TRACER OSNOISE_TRACER \
           TIMERLAT_TRACER SCHED_TRACER PREEMPT NET_9P_VIRTIO 9P_FS MODULES; do
    grep -qx "CONFIG_$opt=y" .config || { echo "tracer kernel: CONFIG_$opt did not stick" >&2; exit 1; }
done
grep -q '^CONFIG_PREEMPTIRQ_TRACEPOINTS=y' .config || { echo "tracer kernel: no preemptirq events" >&2; exit 1; }
echo "tracer kernel: building with $(nproc) jobs (about 13 minutes on two cores)"
start=$(date +%s)
make -s -j"$(nproc)" bzImage modules
make -s modules_prepare
echo "tracer kernel: built in $(( $(date +%s) - start )) s"
ln -sfn "$src" "$out/src"
touch "$stamp"
