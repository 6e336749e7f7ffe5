#!/usr/bin/env bash
# The GPU checks of a session with a lent GPU machine, in two halves.
#
#   scripts/gpu-check.sh bundle [BUILD_DIR]   (here: needs the build, with the GPU's architecture,
#                                              e.g. -DSLUICE_CUDA_ARCHITECTURES=90 for an H100)
#       packs the GPU tests, sluice and the benchmarks (stripped) with scripts/device-bundle.sh
#       into .devrun/bundle.tar.xz, to carry to the GPU machine (`carry: [".devrun"]`).
#   scripts/gpu-check.sh run [OUT_DIR]        (there: in the repository root)
#       unpacks the bundle to /tmp/sluice, runs tst_cuda_kernels, tst_gpu_layer_ops and
#       tst_gpu_training (their logs in OUT_DIR), then the training benchmark's first part
#       (1024 wide, fp32/TF32/bf16) against the machine's PyTorch into OUT_DIR/gpu-train.jsonl,
#       and prints the summary. The 4096-wide part: bench/gpu_train_bench.sh /tmp/sluice/bin
#       OUT_DIR/gpu-train.jsonl --widths 4096 --append (a device command runs at most 10 minutes).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mode=${1:-}
case $mode in
bundle)
    build=${2:-build}
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    for program in tests/tst_cuda_kernels tests/tst_gpu_layer_ops tests/tst_gpu_training bin/sluice bench/sluice_gemm_bench bench/sluice_kernel_bench; do
        cp "$build/$program" "$tmp/"
        strip "$tmp/$(basename "$program")"
    done
    "$here/scripts/device-bundle.sh" "$here/.devrun" "$tmp"/*
    ls -l "$here/.devrun/bundle.tar.xz"
    ;;
run)
    out=${2:-${OUT:-/tmp/gpu-check}}
    mkdir -p "$out"
    python3 -c "import tarfile; tarfile.open('$here/.devrun/bundle.tar.xz').extractall('/tmp/sluice')"
    export LD_LIBRARY_PATH=/tmp/sluice/lib QT_QPA_PLATFORM=offscreen
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
    status=0
    for t in tst_cuda_kernels tst_gpu_layer_ops tst_gpu_training; do
        /tmp/sluice/bin/$t >"$out/$t.txt" 2>&1 || status=1
        tail -n 2 "$out/$t.txt"
    done
    grep -h "^FAIL" "$out"/tst_*.txt || true
    "$here/bench/gpu_train_bench.sh" /tmp/sluice/bin "$out/gpu-train.jsonl" --widths 1024 --rounds 1 || status=1
    exit $status
    ;;
*)
    sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
