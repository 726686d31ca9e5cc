#!/usr/bin/env bash
# Fetches Debian's stock and PREEMPT_RT kernels (image, headers, kbuild) and the kernel source,
# all from bookworm-backports, without installing anything on the host: each package is
# downloaded with `apt-get download` and unpacked with `dpkg -x` under OUT_DIR/root.
#
# Debian's headers package includes its "-common" Makefile by absolute path
# (/usr/src/linux-headers-V-common/Makefile); after `dpkg -x` that path is wrong, so it is
# rewritten to the unpacked copy. The scripts/ and tools/ links are relative and need nothing.
#
# DEB_ARCH=arm64 or armhf fetches that architecture's kernels instead (arm64 / rt-arm64, armmp /
# rt-armmp), adding it to dpkg's foreign architectures if needed, and the guest's user space from
# the same architecture (busybox-static, rt-tests, trace-cmd, rtla, util-linux for chrt, and the
# libraries they load). The modules are cross-built, so linux-kbuild (the build's host tools:
# fixdep, modpost) is the amd64 one, and no linux-source is fetched (the tracer kernel is x86).
#
# usage: fetch-debian.sh OUT_DIR [images]
#   images: only the two kernel images and rtla (what a guest without the noise module needs;
#           no headers, kbuild or linux-source)
# Prints nothing on a cached second run but the ABI (6.12.95+deb12), on its last line.
set -euo pipefail
out=$1 only=${2:-}
arch=${DEB_ARCH:-amd64}
suite=bookworm-backports
list=/etc/apt/sources.list.d/rtsleuth-lab-backports.list
refresh=
if ! apt-cache policy 2>/dev/null | grep -q "$suite"; then
    echo "deb http://deb.debian.org/debian $suite main" >"$list"
    refresh=1
fi
if [[ $arch != amd64 ]] && ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
    dpkg --add-architecture "$arch"
    refresh=1
fi
# One index may fail to download for a foreign architecture; apt-get download says so if it matters.
[[ -z $refresh ]] || apt-get update -qq || true

case $arch in
amd64) flavours=(amd64 rt-amd64) unsigned=-unsigned ;;
arm64) flavours=(arm64 rt-arm64) unsigned=-unsigned ;;
armhf) flavours=(armmp rt-armmp) unsigned= ;;
*) echo "fetch-debian.sh: unknown DEB_ARCH '$arch' (amd64, arm64, armhf)" >&2; exit 2 ;;
esac
# The metapackages name the current ABI; the unsigned images avoid the signed-template chain.
image_of() { apt-cache depends -t "$suite" "$1:$arch" | sed -n 's/^  Depends: //p' | head -1 | sed 's/:.*//'; }
stock=$(image_of "linux-image-${flavours[0]}")      # linux-image-6.12.95+deb12-amd64
rt=$(image_of "linux-image-${flavours[1]}")         # linux-image-6.12.95+deb12-rt-amd64
abi=${stock#linux-image-}; abi=${abi%-"${flavours[0]}"}   # 6.12.95+deb12
srcver=$(echo "$abi" | cut -d. -f1-2)                     # 6.12
mkdir -p "$out/debs" "$out/root"
cd "$out/debs"
want=("$stock$unsigned:$arch" "$rt$unsigned:$arch" "rtla:$arch")
if [[ $only != images ]]; then
    want+=("linux-headers-$abi-${flavours[0]}:$arch" "linux-headers-$abi-${flavours[1]}:$arch"
           "linux-headers-$abi-common" "linux-headers-$abi-common-rt" "linux-kbuild-$abi:amd64")
    [[ $arch == amd64 ]] && want+=("linux-source-$srcver")
fi
if [[ $arch != amd64 ]]; then
    for p in busybox-static rt-tests trace-cmd util-linux libc6 libgcc-s1 libnuma1 libtraceevent1 \
        libtracefs1 libzstd1; do
        want+=("$p:$arch")
    done
fi
missing=()
for p in "${want[@]}"; do
    name=${p%:*} parch=${p##*:}
    [[ $p == *:* ]] || parch=all
    compgen -G "${name}_*_${parch}.deb" >/dev/null || compgen -G "${name}_*_all.deb" >/dev/null || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "lab: downloading ${missing[*]}"
    apt-get download -q -t "$suite" "${missing[@]}" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true
fi
for deb in *.deb; do
    [[ -f "$out/root/.unpacked-$deb" ]] && continue
    dpkg -x "$deb" "$out/root"
    touch "$out/root/.unpacked-$deb"
done
for flavour in "${flavours[@]}"; do
    mk="$out/root/usr/src/linux-headers-$abi-$flavour/Makefile"
    [[ -f $mk ]] || continue
    sed -i "s|^include /usr/src/|include $out/root/usr/src/|" "$mk"
done
echo "$abi"
