#!/usr/bin/env bash
# Installs what the lab needs on the host from Debian's packages, only where missing.
# ARCH... (lab/run's guest architectures: x86_64, aarch64, armv7) adds each ARM guest's emulator
# and the cross compiler its module and static injectors are built with.
#
# usage: deps.sh [ARCH...]
set -euo pipefail
need=()
have() { command -v "$1" >/dev/null 2>&1; }
have qemu-system-x86_64 || need+=(qemu-system-x86)
for arch in "$@"; do
    case $arch in
    aarch64) have qemu-system-aarch64 || need+=(qemu-system-arm)
             have aarch64-linux-gnu-gcc || need+=(gcc-aarch64-linux-gnu)
             [[ -f /usr/aarch64-linux-gnu/lib/libc.a ]] || need+=(libc6-dev-arm64-cross) ;;
    armv7) have qemu-system-arm || need+=(qemu-system-arm)
           have arm-linux-gnueabihf-gcc || need+=(gcc-arm-linux-gnueabihf)
           [[ -f /usr/arm-linux-gnueabihf/lib/libc.a ]] || need+=(libc6-dev-armhf-cross) ;;
    esac
done
[[ -x /bin/busybox ]] && file -L /bin/busybox 2>/dev/null | grep -q static || need+=(busybox-static)
have cyclictest || need+=(rt-tests)
have trace-cmd || need+=(trace-cmd)
have pahole || need+=(dwarves)
have gcc || need+=(gcc)
have x86_64-linux-musl-gcc || need+=(musl-tools)   # zstd-sys builds C for the static rtsleuth
have zstd || need+=(zstd)
for tool in bc bison flex cpio xz rsync modinfo file; do
    have $tool || need+=("$(case $tool in xz) echo xz-utils ;; modinfo) echo kmod ;; *) echo $tool ;; esac)")
done
[[ -f /usr/include/libelf.h ]] || need+=(libelf-dev)
[[ -f /usr/include/openssl/ssl.h ]] || need+=(libssl-dev)
if ((${#need[@]})); then
    echo "lab: installing ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
