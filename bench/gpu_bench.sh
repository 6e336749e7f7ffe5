#!/usr/bin/env bash
# GPU benchmarks: Sluice's cuBLAS wrapper (sluice_gemm_bench) against torch.matmul
# (peers/gemm_torch.py), and the CUDA backend's memory-bound kernels (sluice_kernel_bench)
# against PyTorch eager doing the same work (peers/kernel_torch.py). Each tool runs in turn,
# --rounds times, so that clock and thermal drift fall on both; every program reports medians
# over its own timed batches. Raw JSON lines go to OUT; summarize_gpu.py makes the tables.
#
# usage: bench/gpu_bench.sh BIN_DIR OUT.jsonl [--rounds 2]
#   BIN_DIR holds sluice_gemm_bench and sluice_kernel_bench (a build's bench/ folder, or an
#   unpacked scripts/device-bundle.sh archive's bin/). Needs python3 with torch and a GPU.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[[ $# -ge 2 ]] || { echo "usage: $0 BIN_DIR OUT.jsonl [--rounds N]" >&2; exit 2; }
bin=$1 out=$2 rounds=2
[[ ${3:-} == --rounds ]] && rounds=$4
python=${SLUICE_PYTHON:-python3}
: >"$out"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader >&2 || true
for ((r = 1; r <= rounds; ++r)); do
    echo "round $r/$rounds" >&2
    "$bin/sluice_gemm_bench" --runs 7 >>"$out"
    PYTHONUNBUFFERED=1 "$python" "$here/peers/gemm_torch.py" --runs 7 >>"$out"
    "$bin/sluice_kernel_bench" --runs 7 >>"$out"
    PYTHONUNBUFFERED=1 "$python" "$here/peers/kernel_torch.py" --runs 7 >>"$out"
done
"$python" "$here/summarize_gpu.py" "$out"
