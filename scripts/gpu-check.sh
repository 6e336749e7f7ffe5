#!/usr/bin/env bash
# The GPU checks of a session with a lent GPU machine, in two halves.
#
#   scripts/gpu-check.sh bundle [BUILD_DIR]   (here: needs the build, with the GPU's architecture,
#                                              e.g. -DSLUICE_CUDA_ARCHITECTURES=90 for an H100)
#       packs the GPU tests, sluice and the benchmarks (stripped) with scripts/device-bundle.sh
#       into .devrun/bundle.tar.xz, to carry to the GPU machine (`carry: [".devrun"]`).
#   scripts/gpu-check.sh run [OUT_DIR] [--tests-only | BENCH_OPTION...]   (there: in the repository root)
#       unpacks the bundle to /tmp/sluice, runs tst_cuda_kernels, tst_gpu_sampler,
#       tst_gpu_layer_ops and tst_gpu_training (their logs in OUT_DIR), then the training benchmark's first part
#       (1024 wide, fp32/TF32/bf16) against the machine's PyTorch into OUT_DIR/gpu-train.jsonl,
#       and prints the summary; BENCH_OPTIONs replace that part's grid (gpu_train_bench.sh's
#       options, e.g. --widths 4096 --append). The 4096-wide part by hand: bench/gpu_train_bench.sh /tmp/sluice/bin
#       OUT_DIR/gpu-train.jsonl --widths 4096 --append (a device command runs at most 10 minutes).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mode=${1:-}
case $mode in
bundle)
    build=${2:-build}
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    for program in tests/tst_cuda_kernels tests/tst_gpu_sampler tests/tst_gpu_layer_ops tests/tst_gpu_training bin/sluice bench/sluice_gemm_bench bench/sluice_kernel_bench; do
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
    # cuBLAS and NCCL are loaded at run time (dlopen): take them from wherever the machine has
    # them (the loader's cache, the CUDA toolkit, or the nvidia-* Python wheels beside PyTorch).
    extra=$(
        { ldconfig -p | awk '/libcublas\.so\.|libnccl\.so\.2/ { print $NF }'
          find /usr/local/cuda*/ /usr/lib /opt -name 'libcublas.so.*' -o -name 'libnccl.so.2*' 2>/dev/null || true; } |
            xargs -r -n1 dirname | awk '!seen[$0]++' | paste -sd: || true)
    export LD_LIBRARY_PATH=/tmp/sluice/lib${extra:+:$extra}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} QT_QPA_PLATFORM=offscreen
    echo "libraries: $LD_LIBRARY_PATH"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
    status=0
    for t in tst_cuda_kernels tst_gpu_sampler tst_gpu_layer_ops tst_gpu_training; do
        timeout 300 /tmp/sluice/bin/$t >"$out/$t.txt" 2>&1 || status=1
        tail -n 2 "$out/$t.txt"
    done
    grep -h "^FAIL" "$out"/tst_*.txt || true
    [[ ${3:-} == --tests-only ]] && exit $status
    shift $(($# < 2 ? $# : 2))
    [[ $# -gt 0 ]] || set -- --widths 1024 --rounds 1
    "$here/bench/gpu_train_bench.sh" /tmp/sluice/bin "$out/gpu-train.jsonl" "$@" || status=1
    exit $status
    ;;
*)
    sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
