#!/usr/bin/env bash
# Builds rtsleuth statically (musl, release) for the lab's guests and prints the binary's path.
# zstd-sys builds C for it, which needs musl-tools (host/deps.sh).
#
# usage: build-rtsleuth.sh REPO
set -euo pipefail
repo=$1
target=x86_64-unknown-linux-musl
rustup target list --installed | grep -q "$target" || rustup target add "$target" >&2
cargo build -q --release --locked --manifest-path "$repo/Cargo.toml" -p rtsleuth --target "$target" >&2
echo "$repo/target/$target/release/rtsleuth"
