#!/usr/bin/env bash
# The CPU training step of the example image classifier's CNN (projects/image-classifier.sluice,
# bench/models/image_cnn.json: 48x48x3 inputs, batch 64, Adam): `sluice bench train --model`
# against the same network in PyTorch (bench/peers/torch_cnn_train.py, NCHW and channels_last),
# from a PyPI wheel and from Debian's python3-torch, RUNS times each in turn; raw JSON lines to OUT.
#
# usage: bench/cnn_train_bench.sh BUILD_DIR OUT.jsonl [--runs 5] [--threads 2] [--steps 30] [--peer-python PY]
#   --peer-python: an interpreter with PyTorch from PyPI (default python3); Debian's is /usr/bin/python3.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[[ $# -ge 2 ]] || { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
build=$(cd "$1" && pwd) out=$2
shift 2
runs=5 threads=2 steps=30 peer_python=python3
while [[ $# -gt 0 ]]; do
    [[ $# -ge 2 ]] || { echo "cnn_train_bench.sh: $1 needs a value" >&2; exit 2; }
    case $1 in
        --runs) runs=$2 ;;
        --threads) threads=$2 ;;
        --steps) steps=$2 ;;
        --peer-python) peer_python=$2 ;;
        *) echo "cnn_train_bench.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift 2
done
: >"$out"
for ((r = 1; r <= runs; ++r)); do
    echo "run $r/$runs" >&2
    for replicas in 1 2; do
        "$build/bin/sluice" bench train --model "$here/models/image_cnn.json" --input-shape 48x48x3 --widths 6912,5 --batch 64 \
            --steps "$steps" --threads "$threads" --replicas "$replicas" --json >>"$out"
    done
    # Three timed runs in one process (their median): oneDNN is fastest once its primitives are cached.
    # The PyPI wheel also under torch.compile (Debian's 1.13 has none).
    "$peer_python" "$here/peers/torch_cnn_train.py" --steps "$steps" --threads "$threads" --runs 3 --compile >>"$out"
    /usr/bin/python3 "$here/peers/torch_cnn_train.py" --steps "$steps" --threads "$threads" --runs 3 >>"$out"
done
/usr/bin/python3 - "$out" <<'PY'
import json, statistics, sys
from collections import defaultdict
groups = defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    key = ("Sluice, %d replica%s" % (r["replicas"], "s" if r["replicas"] > 1 else "")) if r["tool"] == "sluice" else "PyTorch %s, %s" % (r["torch"], r["format"])
    groups[key].append(r["samples_per_s"])
print("| tool | samples/s (median) | runs |")
print("|---|---:|---:|")
for key, rates in sorted(groups.items()):
    print(f"| {key} | {statistics.median(rates):,.0f} | {len(rates)} |")
PY
