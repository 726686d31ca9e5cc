#!/usr/bin/env bash
# Fetches Debian's stock and PREEMPT_RT kernels (image, headers, kbuild) and the kernel source,
# all from bookworm-backports, without installing anything on the host: each package is
# downloaded with `apt-get download` and unpacked with `dpkg -x` under OUT_DIR/root.
#
# Debian's headers package includes its "-common" Makefile by absolute path
# (/usr/src/linux-headers-V-common/Makefile); after `dpkg -x` that path is wrong, so it is
# rewritten to the unpacked copy. The scripts/ and tools/ links are relative and need nothing.
#
# usage: fetch-debian.sh OUT_DIR [images]
#   images: only the two kernel images and rtla (what a guest without the noise module needs;
#           no headers, kbuild or linux-source)
# Prints nothing on a cached second run but the ABI (6.12.95+deb12), on its last line.
set -euo pipefail
out=$1 only=${2:-}
suite=bookworm-backports
list=/etc/apt/sources.list.d/rtsleuth-lab-backports.list
if ! apt-cache policy 2>/dev/null | grep -q "$suite"; then
    echo "deb http://deb.debian.org/debian $suite main" >"$list"
    apt-get update -qq
fi
# The metapackages name the current ABI; the unsigned images avoid the signed-template chain.
image_of() { apt-cache depends -t "$suite" "$1" | sed -n 's/^  Depends: //p' | head -1; }
stock=$(image_of linux-image-amd64)       # linux-image-6.12.95+deb12-amd64
rt=$(image_of linux-image-rt-amd64)       # linux-image-6.12.95+deb12-rt-amd64
abi=${stock#linux-image-}; abi=${abi%-amd64}   # 6.12.95+deb12
srcver=$(echo "$abi" | cut -d. -f1-2)          # 6.12
mkdir -p "$out/debs" "$out/root"
cd "$out/debs"
want=("$stock-unsigned" "$rt-unsigned" "linux-headers-$abi-amd64" "linux-headers-$abi-rt-amd64"
      "linux-headers-$abi-common" "linux-headers-$abi-common-rt" "linux-kbuild-$abi"
      "linux-source-$srcver" rtla)
[[ $only == images ]] && want=("$stock-unsigned" "$rt-unsigned" rtla)
missing=()
for p in "${want[@]}"; do compgen -G "${p}_*.deb" >/dev/null || missing+=("$p"); done
if ((${#missing[@]})); then
    echo "lab: downloading ${missing[*]}"
    apt-get download -q -t "$suite" "${missing[@]}" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true
fi
for deb in *.deb; do
    [[ -f "$out/root/.unpacked-$deb" ]] && continue
    dpkg -x "$deb" "$out/root"
    touch "$out/root/.unpacked-$deb"
done
for flavour in amd64 rt-amd64; do
    mk="$out/root/usr/src/linux-headers-$abi-$flavour/Makefile"
    [[ -f $mk ]] || continue
    sed -i "s|^include /usr/src/|include $out/root/usr/src/|" "$mk"
done
echo "$abi"
