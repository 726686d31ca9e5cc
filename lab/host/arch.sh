# The lab's guest architectures, sourced by lab/run and lab/freshboot so that both map kernels
# to architectures, Debian packages and cross compilers the same way. Needs $cache.

# Kernel names with `arm` expanded to the four ARM guests, into the array `kernels`.
expand_kernels() {
    kernels=()
    local k
    for k in "$@"; do
        if [[ $k == arm ]]; then kernels+=(arm64-stock arm64-rt armv7-stock armv7-rt); else kernels+=("$k"); fi
    done
}

# The architectures of the kernels named in `kernels`, each once, into the array `archs`.
kernel_archs() {
    archs=()
    local k a
    for k in "${kernels[@]}"; do
        a=$(arch_of "$k")
        [[ " ${archs[*]} " == *" $a "* ]] || archs+=("$a")
    done
}

# The sysroot of an architecture's guest user space: none for x86, whose peers are the host's.
sysroot_of() { if [[ $1 != x86_64 ]]; then echo "$(deb_dir "$1")/root"; fi; }

# The guest architecture of a kernel: dist/build.sh's name, Debian's, the kernel's ARCH= and the
# cross compiler's prefix (the modules and the static injectors are cross-built).
arch_of() { case $1 in arm64-*) echo aarch64 ;; armv7-*) echo armv7 ;; *) echo x86_64 ;; esac; }
declare -A deb_arch=([x86_64]=amd64 [aarch64]=arm64 [armv7]=armhf)
declare -A kernel_arch=([x86_64]=x86 [aarch64]=arm64 [armv7]=arm)
declare -A cross=([x86_64]= [aarch64]=aarch64-linux-gnu- [armv7]=arm-linux-gnueabihf-)

# The unpacked Debian packages of an architecture (x86's keeps its old place in the cache).
deb_dir() { if [[ $1 == x86_64 ]]; then echo "$cache/deb"; else echo "$cache/deb-${deb_arch[$1]}"; fi; }

# Debian's flavour of an ARM kernel: arm64 / rt-arm64, armmp / rt-armmp. The stock ARM kernels
# are built voluntary (no PREEMPT_DYNAMIC), so they take no preempt= argument.
arm_flavour() {
    local f=${1%-*}
    f=${f/armv7/armmp}
    if [[ $1 == *-rt ]]; then echo "rt-$f"; else echo "$f"; fi
}
