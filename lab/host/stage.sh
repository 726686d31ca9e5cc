#!/usr/bin/env bash
# Builds the kernel-independent part of the lab's initramfs into STAGE_DIR: busybox (static),
# rtsleuth (static musl build), fifo_burst (static), the guest scripts, and cyclictest,
# trace-cmd and rtla with the shared libraries `ldd` lists for them, at the same paths.
# rtla is the bookworm-backports build (auto-analysis, `-a`); it cancels threads, which
# dlopens libgcc_s.so.1 at run time, so that library is copied although ldd does not list it.
#
# EXTRA_BIN...: more host programs copied the same way (lab/freshboot --tests: chrt, which the
# CLI's measure tests run and busybox lacks; lab/run: chrt and the chain scenarios' static
# irq_app and timerfd_app).
#
# LAB_SYSROOT=DIR (an ARM guest): the peers, busybox and chrt come from DIR instead, Debian's
# packages of the guest's architecture unpacked there by `kernels/fetch-debian.sh`; ldd cannot
# read a foreign binary, so the loader and every library of DIR's /lib/TRIPLET and
# /usr/lib/TRIPLET are copied (libc, libnuma, libtrace*, libzstd, libgcc_s: about 6 MB).
# Then PROGRAM names in EXTRA_BIN (chrt) are looked up in DIR/usr/bin.
#
# usage: stage.sh STAGE_DIR RTSLEUTH_BIN FIFO_BURST_BIN RTLA_BIN GUEST_DIR [EXTRA_BIN...]
set -euo pipefail
stage=$1 rtsleuth=$2 fifo_burst=$3 rtla=$4 guest=$5
shift 5
sysroot=${LAB_SYSROOT:-}
rm -rf "$stage" && mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,lib,lib64,proc,sys,dev,tmp,out,etc,lab}
cp "$sysroot/bin/busybox" "$stage/bin/busybox"
cp "$rtsleuth" "$stage/bin/rtsleuth"
cp "$fifo_burst" "$stage/bin/fifo_burst"
cp -r "$guest/." "$stage/lab/"
copy_with_libs() {
    local bin=$1 lib
    cp "$bin" "$stage/usr/bin/"
    [[ -z $sysroot ]] || return 0
    for lib in $(ldd "$bin" | grep -o '/[^ ]*' | sort -u); do
        mkdir -p "$stage$(dirname "$lib")"
        cp -L "$lib" "$stage$lib"
    done
}
# The program itself when it is a path, else the guest architecture's build of it.
program() { if [[ $1 == */* || -z $sysroot ]]; then echo "$1"; else echo "$sysroot/usr/bin/$1"; fi; }
if [[ -n $sysroot ]]; then
    cp -a "$sysroot"/lib/ld-linux-* "$stage/lib/"
    for dir in lib usr/lib; do
        for triplet in "$sysroot/$dir"/*-linux-gnu*/; do
            mkdir -p "$stage/$dir/$(basename "$triplet")"
            cp -a "$triplet"/*.so* "$stage/$dir/$(basename "$triplet")/"
        done
    done
    copy_with_libs "$sysroot/usr/bin/cyclictest"
    copy_with_libs "$sysroot/usr/bin/trace-cmd"
else
    copy_with_libs "$(command -v cyclictest)"
    copy_with_libs "$(command -v trace-cmd)"
fi
copy_with_libs "$rtla"
for extra in "$@"; do copy_with_libs "$(program "$extra")"; done
if [[ -z $sysroot ]]; then
    gcc_s=/lib/x86_64-linux-gnu/libgcc_s.so.1
    cp -L "$gcc_s" "$stage/lib/x86_64-linux-gnu/libgcc_s.so.1"
fi
mv "$stage/lab/init" "$stage/init"
chmod +x "$stage/init"
