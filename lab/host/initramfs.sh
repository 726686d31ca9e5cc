#!/usr/bin/env bash
# Packs the lab's initramfs for one kernel: busybox, the static rtsleuth and fifo_burst, the
# peers (cyclictest, trace-cmd, rtla) with every shared library they load, the guest scripts,
# the noise module built for this kernel and, for Debian kernels, the 9p modules the results
# share needs (Debian builds them as modules; the tracer kernel has them built in).
#
# usage: initramfs.sh OUT.cpio.gz STAGE_DIR KO_DIR [MODULES_ROOT KERNEL_RELEASE]
#   STAGE_DIR    the kernel-independent tree (made once by `stage_common`, see lab/run)
#   KO_DIR       directory holding rtsleuth_noise.ko for this kernel ("" for none: lab/freshboot)
#   MODULES_ROOT a tree with lib/modules/KERNEL_RELEASE (Debian's unpacked image package)
set -euo pipefail
out=$1 stage=$2 ko_dir=$3 mroot=${4:-} release=${5:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -a "$stage/." "$work/"
mkdir -p "$work/lib/modules"
if [[ -n $ko_dir ]]; then cp "$ko_dir/rtsleuth_noise.ko" "$work/lib/modules/"; fi

# Modules in load order, dependencies first (no modules.dep: dpkg -x does not run depmod).
load_order=()
add_module() {
    local name=$1 file dep
    for seen in "${load_order[@]:-}"; do [[ $seen == "$name" ]] && return; done
    file=$(find "$mroot/lib/modules/$release/kernel" -name "$name.ko*" | head -1)
    [[ -n $file ]] || { echo "initramfs: module $name not found for $release" >&2; exit 1; }
    for dep in $(modinfo -F depends "$file" | tr ',' ' '); do add_module "$dep"; done
    case $file in
        *.xz) xz -dc "$file" >"$work/lib/modules/$name.ko" ;;
        *.zst) zstd -qdc "$file" >"$work/lib/modules/$name.ko" ;;
        *) cp "$file" "$work/lib/modules/$name.ko" ;;
    esac
    load_order+=("$name")
}
if [[ -n $mroot ]]; then
    add_module 9pnet_virtio
    add_module 9p
fi
printf '%s\n' "${load_order[@]:-}" | sed '/^$/d' >"$work/lib/modules/load-order"
(cd "$work" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out"
