#!/usr/bin/env bash
# The Python package against the peers a Python user would pick, in the same run, RUNS times each
# in turn (so drift falls on every tool); raw JSON lines to OUT, medians by summarize_python.py.
#   - a PyTorch CPU training loop over a --size .npy (x: 256 float32 + y), fed by sluice.torch or
#     by a DataLoader with a BatchSampler and a batched __getitem__ (0 and 2 workers): the loader
#     alone, and the loop with its input-bound share (python_loader_bench.py);
#   - per-batch overhead of a Python map, and from_generator, against tf.data's numpy_function
#     and from_generator on the same Python code (python_functions_bench.py).
#
# usage: bench/python_bench.sh BUILD_DIR OUT.jsonl [--runs 5] [--size 2G] [--data DIR] [--tf-python PY]
#   BUILD_DIR: a build with the Python package (BUILD_DIR/python) and bin/sluice; --data: where the
#   .npy files are written (default BUILD_DIR/python-bench-data); --tf-python: a Python with
#   TensorFlow (default BUILD_DIR/tf-venv/bin/python; the tf.data half is skipped without one).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[[ $# -ge 2 ]] || { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
build=$(cd "$1" && pwd) out=$2
shift 2
runs=5 size=2G data=$build/python-bench-data tf_python=$build/tf-venv/bin/python
while [[ $# -gt 0 ]]; do
    [[ $# -ge 2 ]] || { echo "python_bench.sh: $1 needs a value" >&2; exit 2; }
    case $1 in
        --runs) runs=$2 ;;
        --size) size=$2 ;;
        --data) data=$2 ;;
        --tf-python) tf_python=$2 ;;
        *) echo "python_bench.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift 2
done
python=/usr/bin/python3
export PYTHONPATH=$build/python
bytes=$(numfmt --from=iec "$size")
rows=$((bytes / (257 * 4)))
if [[ ! -f $data/x.npy ]] || [[ $($python -c "import numpy; print(numpy.load('$data/y.npy', mmap_mode='r').shape[0])") != "$rows" ]]; then
    mkdir -p "$data"
    "$build/bin/sluice" gen regression --out "$data" --rows "$rows" --feature x:256 --target y:1 >/dev/null
fi
: >"$out"
# Page-cached for every tool alike, before each measurement: TensorFlow's runs take enough memory
# to push part of the file out of the cache, and the next tool would pay for reading it back.
warm() { cat "$data"/x.npy "$data"/y.npy >/dev/null; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for ((r = 1; r <= runs; ++r)); do
    echo "run $r/$runs" >&2
    for mode in loader train; do
        warm
        $python "$here/python_loader_bench.py" --tool sluice --data "$data" --mode "$mode" --threads 2 >>"$out"
        for workers in 0 2; do
            warm
            $python "$here/python_loader_bench.py" --tool dataloader --data "$data" --mode "$mode" --workers "$workers" >>"$out"
        done
    done
    for case in map generator; do
        rows=200000
        [[ $case == generator ]] && rows=50000 # tf.data's from_generator takes 10 s for these
        $python "$here/python_functions_bench.py" --tool sluice --case "$case" --rows "$rows" --scratch "$scratch" >>"$out"
        if [[ -x $tf_python ]]; then
            TF_CPP_MIN_LOG_LEVEL=3 "$tf_python" "$here/python_functions_bench.py" --tool tfdata --case "$case" --rows "$rows" \
                --scratch "$scratch" >>"$out" 2>/dev/null
        fi
    done
done
$python "$here/summarize_python.py" "$out"
