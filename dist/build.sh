#!/usr/bin/env bash
# Builds rtsleuth as one static binary per target, for boards that have no toolchain:
#
#   dist/x86_64/rtsleuth    x86_64-unknown-linux-musl
#   dist/aarch64/rtsleuth   aarch64-unknown-linux-musl      (Cortex-A53/A57/A72…, ARMv8)
#   dist/armv7/rtsleuth     armv7-unknown-linux-gnueabihf   (Cortex-A7/A9/A15, hard float)
#
# armv7 is glibc linked statically (`+crt-static`), not musl: the Rust distribution this
# project's CI can reach serves no armv7 musl standard library (rustup answers 404). rtsleuth
# resolves no host names and loads no NSS module, the parts static glibc cannot do.
#
# The C parts (zstd, mimalloc) are compiled with Debian's cross compilers, which are also the
# linkers; their packages (and qemu-user, to run the results) are installed when missing and
# this runs as root. Also writes dist/completions/ and dist/man/ (`rtsleuth generate`).
#
# Usage: dist/build.sh [ARCH...]     ARCH: x86_64 aarch64 armv7 (default: all three)
set -euo pipefail
cd "$(dirname "$0")/.."
archs=("$@")
# DIST_PROFILE: the cargo profile, `dist` (what ships) unless told; the test of these builds
# (crates/rtsleuth/tests/dist.rs) asks for `dist-check`, the same targets, linkers and static
# linking without optimisation, in 40 % of the time. DIST_DIR: where the binaries go.
profile=${DIST_PROFILE:-dist}
out=${DIST_DIR:-dist}
[ ${#archs[@]} -gt 0 ] || archs=(x86_64 aarch64 armv7)

# arch -> rust target, C compiler, Debian package of that compiler
declare -A target=(
    [x86_64]=x86_64-unknown-linux-musl
    [aarch64]=aarch64-unknown-linux-musl
    [armv7]=armv7-unknown-linux-gnueabihf
)
declare -A cc=(
    [x86_64]=x86_64-linux-musl-gcc
    [aarch64]=aarch64-linux-gnu-gcc
    [armv7]=arm-linux-gnueabihf-gcc
)
declare -A pkg=(
    [x86_64]=musl-tools
    [aarch64]=gcc-aarch64-linux-gnu
    [armv7]=gcc-arm-linux-gnueabihf
)

need=()
for a in "${archs[@]}"; do
    [ -n "${target[$a]:-}" ] || { echo "dist/build.sh: unknown ARCH $a (x86_64, aarch64, armv7)" >&2; exit 2; }
    command -v "${cc[$a]}" > /dev/null || need+=("${pkg[$a]}")
done
command -v qemu-aarch64 > /dev/null || need+=(qemu-user)
command -v file > /dev/null || need+=(file)
if [ ${#need[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "dist/build.sh: install ${need[*]} (Debian packages), or run as root" >&2
        exit 1
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" > /dev/null
fi

for a in "${archs[@]}"; do
    t=${target[$a]}
    rustup target list --installed | grep -qx "$t" || rustup target add "$t"
    env_t=$(echo "$t" | tr 'a-z-' 'A-Z_')
    vars=("CC_${t//-/_}=${cc[$a]}" "CARGO_TARGET_${env_t}_RUSTFLAGS=-C target-feature=+crt-static")
    # The native musl target links with rustc's own musl start files through the host's cc;
    # musl-gcc as the linker would make a dynamic, broken binary. Cross targets link with the
    # cross compiler.
    [ "$a" = x86_64 ] || vars+=("CARGO_TARGET_${env_t}_LINKER=${cc[$a]}")
    env "${vars[@]}" cargo build --quiet --locked --profile "$profile" -p rtsleuth --target "$t"
    mkdir -p "$out/$a"
    cp "${CARGO_TARGET_DIR:-target}/$t/$profile/rtsleuth" "$out/$a/rtsleuth"
    echo "$out/$a/rtsleuth: $(file -b "$out/$a/rtsleuth")"
done

# Completions and man pages are the same for every target; any binary this host runs makes them.
gen=
for a in x86_64 "${archs[@]}"; do
    [ -x "$out/$a/rtsleuth" ] && "$out/$a/rtsleuth" --version > /dev/null 2>&1 && { gen="$out/$a/rtsleuth"; break; }
done
if [ -n "$gen" ]; then
    rm -rf "$out/man" "$out/completions"
    "$gen" generate man "$out/man"
    mkdir -p "$out/completions"
    "$gen" generate completions bash > "$out/completions/rtsleuth.bash"
    "$gen" generate completions zsh > "$out/completions/_rtsleuth"
    "$gen" generate completions fish > "$out/completions/rtsleuth.fish"
    echo "$out/man, $out/completions: from $gen"
fi
