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
root=${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}
cargo install --quiet --locked --force --path crates/rtsleuth
bin="$root/bin/rtsleuth"
# Man pages and completions next to the binary's bin/: man-db and bash-completion look in
# ../share/man and ../share/bash-completion of every PATH directory, so nothing else is needed.
"$bin" generate man "$root/share/man/man1"
mkdir -p "$root/share/bash-completion/completions" "$root/share/zsh/site-functions"
"$bin" generate completions bash > "$root/share/bash-completion/completions/rtsleuth"
"$bin" generate completions zsh > "$root/share/zsh/site-functions/_rtsleuth"
if [ -d "$HOME/.config/fish" ]; then
    mkdir -p "$HOME/.config/fish/completions"
    "$bin" generate completions fish > "$HOME/.config/fish/completions/rtsleuth.fish"
fi
echo "installed: $bin ($("$bin" --version)), man rtsleuth, bash/zsh completions under $root/share (zsh: add $root/share/zsh/site-functions to fpath)"
