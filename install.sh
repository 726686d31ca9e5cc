#!/usr/bin/env bash
# Installs rtsleuth from this checkout into ~/.cargo/bin.
# Needs a Rust toolchain (1.80 or newer); rustup's stable is what CI uses.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v cargo > /dev/null; then
    if [ -x "$HOME/.cargo/bin/cargo" ]; then
        export PATH="$HOME/.cargo/bin:$PATH"
    else
        echo "install.sh: no cargo found; install Rust (https://rustup.rs, or your distribution's rustup package) and run again" >&2
        exit 1
    fi
fi
cargo install --quiet --locked --force --path crates/rtsleuth
echo "installed: $(command -v rtsleuth || echo "$HOME/.cargo/bin/rtsleuth") ($("$HOME/.cargo/bin/rtsleuth" --version))"
