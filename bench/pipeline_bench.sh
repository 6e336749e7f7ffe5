#!/usr/bin/env bash
# Pipeline benchmark: the classic from_npy → global_shuffle → batch → prefetch against what users
# write today for the same job (numpy fancy indexing on a memmap, a PyTorch DataLoader over a
# per-sample Dataset), same file, same batch size, repeated --runs times and interleaved; plus the
# per-element cost of an identity map stage. Prints medians; raw JSON lines go to a results file.
#
# usage: bench/pipeline_bench.sh [--size 2G] [--runs 5] [--seconds 5] [--threads 2] [--batch 256]
#                                [--data DIR] [--out RESULTS.jsonl]
# env:   SLUICE          sluice binary (default: build/bin/sluice under the repo root)
#        SLUICE_PYTHON   python for the numpy / PyTorch peers (default: the first of python3,
#                        /usr/bin/python3 that imports numpy and torch, else numpy alone)
#        SLUICE_TF_PYTHON python for the tf.data peers (default: the first that imports
#                        tensorflow; without one they are skipped)
#        SLUICE_PYPI_PYTHON python with numpy and torch from PyPI wheels: the numpy and
#                        DataLoader peers run again under it, named *_pypi (default:
#                        build/torch-venv/bin/python when present)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)

size=2G runs=5 seconds=5 threads=2 batch=256
data=$root/build/bench-data
out=$root/build/bench-results/pipeline-$(date +%Y%m%d-%H%M%S).jsonl
while [[ $# -gt 0 ]]; do
    [[ $1 == -h || $1 == --help || $# -ge 2 ]] || { echo "pipeline_bench.sh: $1 needs a value" >&2; exit 2; }
    case $1 in
        --size) size=$2 ;;
        --runs) runs=$2 ;;
        --seconds) seconds=$2 ;;
        --threads) threads=$2 ;;
        --batch) batch=$2 ;;
        --data) data=$2 ;;
        --out) out=$2 ;;
        -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
        *) echo "pipeline_bench.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift 2
done

sluice=${SLUICE:-$root/build/bin/sluice}
[[ -x $sluice ]] || { echo "pipeline_bench.sh: no sluice binary at $sluice (build it or set SLUICE)" >&2; exit 1; }
# Debian's python3 has numpy and torch; a pyenv python3 first on PATH may have numpy (and
# tensorflow from PyPI) but no torch, hence the search in that order.
first_python() {
    for cand in python3 /usr/bin/python3; do
        if command -v "$cand" >/dev/null && "$cand" -c "$1" 2>/dev/null; then echo "$cand"; return; fi
    done
}
py=${SLUICE_PYTHON:-$(first_python 'import numpy, torch')}
[[ -n $py ]] || py=$(first_python 'import numpy')
tfpy=${SLUICE_TF_PYTHON:-$(first_python 'import numpy, tensorflow')}
[[ -n $tfpy ]] || echo "pipeline_bench.sh: no python with tensorflow; tf.data peers skipped (pip install tensorflow-cpu)" >&2
[[ -n $py ]] || { echo "pipeline_bench.sh: no python with numpy found (set SLUICE_PYTHON)" >&2; exit 1; }
export SLUICE_PYTHON=$py
pypi_py=${SLUICE_PYPI_PYTHON:-}
[[ -z $pypi_py && -x $root/build/torch-venv/bin/python ]] && pypi_py=$root/build/torch-venv/bin/python

# The same dataset as read_bench.sh (1 KiB float32 rows), reused when already generated.
x=$data/x.npy
stamp=$data/.read_bench-gen
gen_args="regression --size $size --feature x:256 --target y:1"
if [[ -f $x && -f $stamp && $(cat "$stamp") == "$gen_args x_bytes=$(wc -c < "$x")" ]]; then
    echo "using $x (already generated)" >&2
else
    # shellcheck disable=SC2086
    "$sluice" gen $gen_args --out "$data" >&2
    echo "$gen_args x_bytes=$(wc -c < "$x")" > "$stamp"
fi
cat "$x" > /dev/null # page-cached for every tool: this measures the pipeline, not the disk

mkdir -p "$(dirname "$out")"
# The machine, first line of the raw results: figures from another machine are not comparable.
"$py" "$here/peers/machine_record.py" --threads "$threads" > "$out"
for ((run = 1; run <= runs; run++)); do
    echo "run $run/$runs" >&2
    "$sluice" bench pipeline "$x" --json --batch "$batch" --threads "$threads" --seconds "$seconds" >> "$out"
    "$py" "$here/peers/read_peers.py" "$x" --json --order shuffled --batch "$batch" --seconds "$seconds" \
        --workers "0,$threads" --threads "$threads" >> "$out"
    if [[ -n $pypi_py ]]; then
        SLUICE_PYTHON=$pypi_py "$pypi_py" "$here/peers/read_peers.py" "$x" --json --order shuffled --batch "$batch" \
            --seconds "$seconds" --workers "0,$threads" --threads "$threads" --label pypi >> "$out"
    fi
    if [[ -n $tfpy ]]; then
        "$tfpy" "$here/peers/tfdata_peers.py" "$x" --json --batch "$batch" --seconds "$seconds" >> "$out"
    fi
done

echo "results: $out" >&2
echo "sluice: --threads $threads; batch $batch, ${seconds}s each, file $x ($(wc -c < "$x") bytes)"
echo
"$py" "$here/summarize_pipeline.py" "$out"
