#!/usr/bin/env bash
# Packs built programs, and the shared libraries they load that a bare GPU machine lacks (Qt,
# ICU, oneTBB, OpenBLAS, ...), into one compressed archive, for machines that have a driver and
# CUDA but none of Sluice's other dependencies. The C library and the loader stay behind: the
# target's own are used (it must have glibc at least as new as the build machine's).
#
#   scripts/device-bundle.sh OUT_DIR PROGRAM...
#
# Writes OUT_DIR/bundle.tar.xz holding bin/ (the programs) and lib/ (the libraries). There:
#   python3 -c "import tarfile; tarfile.open('OUT_DIR/bundle.tar.xz').extractall('/tmp/sluice')"
#   LD_LIBRARY_PATH=/tmp/sluice/lib /tmp/sluice/bin/PROGRAM
set -euo pipefail

if [ $# -lt 2 ]; then
    echo "usage: $0 OUT_DIR PROGRAM..." >&2
    exit 2
fi
out=$1
shift
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$out"

# glibc's own libraries come from the target system, never from the bundle.
skip='^(libc|libm|libdl|librt|libpthread|libresolv|ld-linux-x86-64|linux-vdso)\.so'

for program in "$@"; do
    cp "$program" "$stage/bin/"
    ldd "$program" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | while read -r lib; do
        name=$(basename "$lib")
        if ! [[ $name =~ $skip ]]; then
            cp -L "$lib" "$stage/lib/$name"
        fi
    done
done

tar -C "$stage" -cJf "$out/bundle.tar.xz" bin lib
echo "$out/bundle.tar.xz: $(du -h "$out/bundle.tar.xz" | cut -f1), $(ls "$stage/lib" | wc -l) libraries, programs: $(ls "$stage/bin" | tr '\n' ' ')"
