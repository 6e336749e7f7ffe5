#!/usr/bin/env bash
# Read benchmark: sluice bench read against the peers users would pick (numpy mmap, PyTorch
# DataLoader), same file, same batch size, sequential and shuffled, repeated --runs times.
# Prints a markdown table of medians over runs; all raw JSON lines are kept in a results file.
#
# usage: bench/read_bench.sh [--size 2G] [--runs 5] [--seconds 5] [--threads 2] [--batch 256]
#                            [--data DIR] [--out RESULTS.jsonl]
# env:   SLUICE         sluice binary (default: build/bin/sluice under the repo root)
#        SLUICE_PYTHON  python with numpy (+ torch for the DataLoader peers); default: the
#                       first of python3, /usr/bin/python3 that imports numpy
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)

size=2G runs=5 seconds=5 threads=2 batch=256
data=$root/build/bench-data
out=$root/build/bench-results/read-$(date +%Y%m%d-%H%M%S).jsonl
while [[ $# -gt 0 ]]; do
    [[ $1 == -h || $1 == --help || $# -ge 2 ]] || { echo "read_bench.sh: $1 needs a value" >&2; exit 2; }
    case $1 in
        --size) size=$2 ;;
        --runs) runs=$2 ;;
        --seconds) seconds=$2 ;;
        --threads) threads=$2 ;;
        --batch) batch=$2 ;;
        --data) data=$2 ;;
        --out) out=$2 ;;
        -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
        *) echo "read_bench.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift 2
done

sluice=${SLUICE:-$root/build/bin/sluice}
[[ -x $sluice ]] || { echo "read_bench.sh: no sluice binary at $sluice (build it or set SLUICE)" >&2; exit 1; }

# The python3 first on PATH may lack numpy (e.g. a pyenv shim), hence the fallback.
py=${SLUICE_PYTHON:-}
if [[ -z $py ]]; then
    for cand in python3 /usr/bin/python3; do
        if command -v "$cand" >/dev/null && "$cand" -c 'import numpy' 2>/dev/null; then py=$cand; break; fi
    done
fi
[[ -n $py ]] || { echo "read_bench.sh: no python with numpy found (set SLUICE_PYTHON)" >&2; exit 1; }
export SLUICE_PYTHON=$py  # so read_peers.py does not go looking again

# Dataset. --size is the total over x.npy and y.npy, so x.npy's exact size is not known in
# advance: a stamp records the arguments and the size x.npy came out at, and a later run
# with the same arguments reuses the files if x.npy still has that size.
x=$data/x.npy
stamp=$data/.read_bench-gen
gen_args="regression --size $size --feature x:256 --target y:1"
if [[ -f $x && -f $stamp && $(cat "$stamp") == "$gen_args x_bytes=$(wc -c < "$x")" ]]; then
    echo "using $x (already generated)" >&2
else
    # shellcheck disable=SC2086  # gen_args is deliberately word-split
    "$sluice" gen $gen_args --out "$data" >&2
    echo "$gen_args x_bytes=$(wc -c < "$x")" > "$stamp"
fi

# Warm the page cache so every tool reads from memory, not from disk: this benchmark is
# about the gather, and the first tool would otherwise pay for everyone's I/O.
cat "$x" > /dev/null

mkdir -p "$(dirname "$out")"
: > "$out"
for ((run = 1; run <= runs; run++)); do
    echo "run $run/$runs" >&2
    for order in sequential shuffled; do
        "$sluice" bench read "$x" --json --order "$order" --batch "$batch" --threads "$threads" \
            --seconds "$seconds" >> "$out"
        # DataLoader workers: 0 (in-process) and as many as sluice has threads.
        "$py" "$here/peers/read_peers.py" "$x" --json --order "$order" --batch "$batch" \
            --seconds "$seconds" --workers "0,$threads" >> "$out"
    done
done

echo "results: $out" >&2
echo "sluice: --threads $threads; peers: batch $batch, ${seconds}s each, file $x ($(wc -c < "$x") bytes)"
echo
"$py" "$here/summarize_read.py" "$out"
