#!/usr/bin/env bash
# Builds rtsleuth statically for the lab's guests and prints the binary's path: musl, release,
# for x86_64 (zstd-sys builds C for it, which needs musl-tools: host/deps.sh); the ARM guests
# run the binaries a board would get, from dist/build.sh (its `dist` profile, cross-linked).
#
# usage: build-rtsleuth.sh REPO [ARCH]      ARCH: x86_64 (default), aarch64, armv7
set -euo pipefail
repo=$1 arch=${2:-x86_64}
if [[ $arch != x86_64 ]]; then
    "$repo/dist/build.sh" "$arch" >&2
    echo "$repo/dist/$arch/rtsleuth"
    exit
fi
target=x86_64-unknown-linux-musl
rustup target list --installed | grep -q "$target" || rustup target add "$target" >&2
cargo build -q --release --locked --manifest-path "$repo/Cargo.toml" -p rtsleuth --target "$target" >&2
echo "$repo/target/$target/release/rtsleuth"
