#!/usr/bin/env bash
# Training benchmark: MLP training steps per second on the CPU, Sluice (`sluice bench train`)
# against PyTorch eager (bench/peers/torch_mlp.py) for the same model, batch, loss and optimizer
# (Adam, relu), both with --threads threads. Each run measures every config with every tool in
# turn; --runs runs. PyTorch runs twice per config: as installed (OpenMP's default wait policy)
# and with OMP_WAIT_POLICY=PASSIVE, which on Debian's build (OpenMP for elementwise ops, OpenBLAS
# pthreads for products) avoids OpenMP's spinning threads starving OpenBLAS's. Sluice's whole
# `sluice run` path (pipeline included) is measured on one config too. PyTorch from its PyPI
# wheel (its own OpenMP, oneDNN and MKL) runs too where a Python with it is given
# (SLUICE_TORCH_WHEEL_PYTHON, default build/torch-venv/bin/python when present; made with
# `python3 -m venv build/torch-venv && build/torch-venv/bin/pip install torch numpy`). Before each measurement
# the script waits (up to --idle-wait seconds) for the CPUs to be idle, as other work on a shared
# machine skews single runs. Prints medians; raw JSON lines go to a results file.
#
# usage: bench/train_bench.sh [--runs 5] [--threads 2] [--out RESULTS.jsonl] [--idle-wait 120]
#                             [--scale 1.0]   (multiplies every config's step count)
# env:   SLUICE          sluice binary (default: build/bin/sluice under the repo root)
#        SLUICE_PYTHON   python with torch (default: the first of python3, /usr/bin/python3 that imports it)
#        SLUICE_TORCH_WHEEL_PYTHON  python with PyTorch from a PyPI wheel (default: build/torch-venv/bin/python if present)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)

runs=5 threads=2 idle_wait=120 scale=1.0
out=$root/build/bench-results/train-$(date +%Y%m%d-%H%M%S).jsonl
while [[ $# -gt 0 ]]; do
    [[ $1 == -h || $1 == --help || $# -ge 2 ]] || { echo "train_bench.sh: $1 needs a value" >&2; exit 2; }
    case $1 in
        --runs) runs=$2 ;;
        --threads) threads=$2 ;;
        --out) out=$2 ;;
        --idle-wait) idle_wait=$2 ;;
        --scale) scale=$2 ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        *) echo "train_bench.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift 2
done

sluice=${SLUICE:-$root/build/bin/sluice}
[[ -x $sluice ]] || { echo "train_bench.sh: no sluice binary at $sluice (build it or set SLUICE)" >&2; exit 1; }
first_python() {
    for cand in python3 /usr/bin/python3; do
        if command -v "$cand" >/dev/null && "$cand" -c "$1" 2>/dev/null; then echo "$cand"; return; fi
    done
}
py=${SLUICE_PYTHON:-$(first_python 'import torch')}
[[ -n $py ]] || { echo "train_bench.sh: no python with torch found (set SLUICE_PYTHON)" >&2; exit 1; }
wheel_py=${SLUICE_TORCH_WHEEL_PYTHON:-}
[[ -z $wheel_py && -x $root/build/torch-venv/bin/python ]] && wheel_py=$root/build/torch-venv/bin/python
if [[ -n $wheel_py ]] && ! "$wheel_py" -c 'import torch' 2>/dev/null; then
    echo "train_bench.sh: $wheel_py cannot import torch; the PyPI wheel's column is skipped" >&2
    wheel_py=
fi
[[ -n $wheel_py ]] || echo "train_bench.sh: no PyTorch PyPI wheel (set SLUICE_TORCH_WHEEL_PYTHON); its column is skipped" >&2

# widths batch steps warmup loss: the issue's four configs, steps for about 1-3 s per measurement.
configs=(
    "128,256,10 64 2000 50 sparse_categorical_crossentropy"
    "128,256,10 1024 300 20 sparse_categorical_crossentropy"
    "784,512,512,10 256 100 10 sparse_categorical_crossentropy"
    "1024,1024,1024,1024,1024 512 20 3 mse"
)
run_config="128,256,10 1024" # the one measured through `sluice run` as well

# Waits until the CPUs were at least 90 % idle over one second, for at most $idle_wait seconds.
wait_idle() {
    local start=$SECONDS busy t1 i1 t2 i2 u n s i w q sq
    while :; do
        read -r _ u n s i w q sq _ < /proc/stat; t1=$((u + n + s + i + w + q + sq)); i1=$i
        sleep 1
        read -r _ u n s i w q sq _ < /proc/stat; t2=$((u + n + s + i + w + q + sq)); i2=$i
        busy=$((100 - 100 * (i2 - i1) / (t2 - t1)))
        ((busy <= 10)) && return
        if ((SECONDS - start >= idle_wait)); then
            echo "train_bench.sh: the machine is still ${busy}% busy; measuring anyway" >&2
            return
        fi
    done
}

mkdir -p "$(dirname "$out")"
: > "$out"
for ((run = 1; run <= runs; run++)); do
    echo "run $run/$runs" >&2
    for config in "${configs[@]}"; do
        read -r widths batch steps warmup loss <<< "$config"
        steps=$(awk -v s="$steps" -v k="$scale" 'BEGIN { n = int(s * k); print n < 1 ? 1 : n }')
        common=(--widths "$widths" --batch "$batch" --steps "$steps" --warmup "$warmup" --loss "$loss" --optimizer adam --threads "$threads" --json)
        wait_idle
        "$sluice" bench train "${common[@]}" >> "$out"
        wait_idle
        "$py" "$here/peers/torch_mlp.py" "${common[@]}" --variant default >> "$out"
        wait_idle
        OMP_WAIT_POLICY=PASSIVE "$py" "$here/peers/torch_mlp.py" "${common[@]}" --variant omp_passive >> "$out"
        if [[ -n $wheel_py ]]; then
            wait_idle
            "$wheel_py" "$here/peers/torch_mlp.py" "${common[@]}" --variant pypi_wheel >> "$out"
        fi
        if [[ "$widths $batch" == "$run_config" ]]; then
            wait_idle
            "$sluice" bench train "${common[@]}" --run >> "$out"
        fi
    done
done

echo "results: $out" >&2
echo "threads $threads; $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo
"$py" "$here/summarize_train.py" "$out"
