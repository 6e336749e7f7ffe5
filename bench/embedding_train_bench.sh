#!/usr/bin/env bash
# The CPU training step of a recommender-style model whose Embedding table has 10 k to 16 M rows
# (bench/models/embedding.json with its input_dim and sparse_updates set per run: ids [B, 8]
# uniform over the table -> Embedding(N, 32) -> Flatten -> Dense 64 relu -> Dense 1, mse, Adam):
# with `sparse_updates` the step costs in proportion to the batch, whatever the table's size;
# without it (Keras's semantics) the whole table is updated every step (10 k and 1 M rows). Against
# PyTorch's nn.Embedding(sparse=True) + SparseAdam and dense Adam (bench/peers/torch_embedding_train.py),
# from a PyPI wheel and from Debian's python3-torch, RUNS times each in turn; raw JSON lines to OUT.
# Each run also times the rows' gather and sparse Adam alone (sluice_embedding_floor_bench): an
# estimate of what a table of that size costs on this machine before the rest of the step.
# Ids uniform over the table (every used row a cache miss: the hard case) and, for 10 k, 1 M and
# 16 M rows with sparse updates, with Zipf-like popularity of exponent --zipf (default 0.9, the
# items' exponent of `sluice gen interactions`), as real interaction logs have.
#
# usage: bench/embedding_train_bench.sh BUILD_DIR OUT.jsonl [--runs 5] [--threads 2] [--steps 50] [--batch 1024] [--zipf 0.9] [--peer-python PY]
#   --peer-python: an interpreter with PyTorch from PyPI (default python3); Debian's is /usr/bin/python3.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[[ $# -ge 2 ]] || { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
build=$(cd "$1" && pwd) out=$2
shift 2
runs=5 threads=2 steps=50 batch=1024 zipf=0.9 peer_python=python3
while [[ $# -gt 0 ]]; do
    [[ $# -ge 2 ]] || { echo "embedding_train_bench.sh: $1 needs a value" >&2; exit 2; }
    case $1 in
        --runs) runs=$2 ;;
        --threads) threads=$2 ;;
        --steps) steps=$2 ;;
        --batch) batch=$2 ;;
        --zipf) zipf=$2 ;;
        --peer-python) peer_python=$2 ;;
        *) echo "embedding_train_bench.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift 2
done
: >"$out"
models=$(mktemp -d)
trap 'rm -rf "$models"' EXIT
for ((r = 1; r <= runs; ++r)); do
    echo "run $r/$runs" >&2
    for run in 10000:true 100000:true 1000000:true 4000000:true 16000000:true 10000:false 1000000:false; do
        rows=${run%%:*} sparse=${run##*:}
        model="$models/embedding-$rows-$sparse.json"
        /usr/bin/python3 -c 'import json, sys; m = json.load(open(sys.argv[1])); m["layers"][0]["input_dim"] = int(sys.argv[2]);
m["layers"][0]["sparse_updates"] = sys.argv[3] == "true"; json.dump(m, open(sys.argv[4], "w"))' \
            "$here/models/embedding.json" "$rows" "$sparse" "$model"
        "$build/bin/sluice" bench train --model "$model" --ids "$rows" --input-shape 8 --widths 8,1 \
            --loss mse --batch "$batch" --steps "$steps" --threads "$threads" --json >>"$out"
    done
    # The rows' gather and sparse Adam alone (bench/embedding_floor_bench.cpp).
    "$build/bench/sluice_embedding_floor_bench" --rows 10000,100000,1000000,4000000,16000000 --ids $((batch * 8)) --dim 32 \
        --threads "$threads" --runs 1 >>"$out"
    for rows in 10000 1000000 16000000; do
        "$build/bin/sluice" bench train --model "$models/embedding-$rows-true.json" --ids "$rows" --ids-zipf "$zipf" --input-shape 8 \
            --widths 8,1 --loss mse --batch "$batch" --steps "$steps" --threads "$threads" --json >>"$out"
    done
    "$peer_python" "$here/peers/torch_embedding_train.py" --rows 10000,1000000,16000000 --modes sparse --zipf "$zipf" \
        --batch "$batch" --steps "$steps" --threads "$threads" --runs 1 >>"$out"
    for python in "$peer_python" /usr/bin/python3; do
        "$python" "$here/peers/torch_embedding_train.py" --rows 10000,100000,1000000,4000000,16000000 --modes sparse \
            --batch "$batch" --steps "$steps" --threads "$threads" --runs 1 >>"$out"
        "$python" "$here/peers/torch_embedding_train.py" --rows 10000,1000000 --modes dense \
            --batch "$batch" --steps "$steps" --threads "$threads" --runs 1 >>"$out"
    done
done
/usr/bin/python3 - "$out" <<'PY'
import json, statistics, sys
from collections import defaultdict
groups = defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("benchmark") == "embedding_floor":
        key = ("floor: gather + sparse Adam alone", "sparse", 0, r["rows"])
    elif r["tool"] == "sluice":
        _, rows, sparse = r["model"][: -len(".json")].split("-")
        key = ("Sluice", "sparse_updates" if sparse == "true" else "dense (Keras)", r.get("ids_zipf", 0), int(rows))
    else:
        key = ("PyTorch " + r["torch"], "SparseAdam" if r["mode"] == "sparse" else "dense Adam", r.get("zipf", 0), r["rows"])
    groups[key].append(r["step_ms_median"] if "step_ms_median" in r else r["step_ms"])
print("| tool | updates | ids | table rows | step ms (median) | runs |")
print("|---|---|---|---:|---:|---:|")
for (tool, mode, zipf, rows), ms in sorted(groups.items()):
    ids = f"Zipf {zipf}" if zipf else "uniform"
    print(f"| {tool} | {mode} | {ids} | {rows:,} | {statistics.median(ms):.2f} | {len(ms)} |")
PY
