#!/usr/bin/env bash
# Decode + resize + batch of JPEG files: Sluice (from_files → decode_image → resize → batch)
# against tf.data (decode_jpeg + tf.image.resize, AUTOTUNE) and torchvision DataLoaders (PIL, and
# torchvision.io.decode_jpeg) on the same files, RUNS times each in turn (drift falls on every
# tool); raw JSON lines to OUT, medians by summarize_images.py. Files are page-cached before
# every measurement, for every tool alike, or, with --cold, evicted before every measurement.
#
# usage: bench/image_bench.sh BUILD_DIR OUT.jsonl [--runs 5] [--rows 4000] [--source 256x256]
#        [--size 224] [--seconds 20] [--peer-python PY] [--data DIR] [--cold]
#   BUILD_DIR: a build with the Python package (BUILD_DIR/python) and bin/sluice; --peer-python:
#   an interpreter with tensorflow, torch and torchvision from PyPI (default: python3).
#   --data: the picture folder (written by `sluice gen images` with --rows and --source when it
#   has no .complete marker; default under BUILD_DIR). --cold: the page cache is dropped before
#   every tool (needs root): the figure for a picture set larger than RAM.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[[ $# -ge 2 ]] || { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
build=$(cd "$1" && pwd) out=$2
shift 2
runs=5 rows=4000 source=256x256 size=224 seconds=20 peer_python=python3 data="" cold=0
while [[ $# -gt 0 ]]; do
    if [[ $1 == --cold ]]; then cold=1; shift; continue; fi
    [[ $# -ge 2 ]] || { echo "image_bench.sh: $1 needs a value" >&2; exit 2; }
    case $1 in
        --runs) runs=$2 ;;
        --rows) rows=$2 ;;
        --source) source=$2 ;;
        --size) size=$2 ;;
        --seconds) seconds=$2 ;;
        --peer-python) peer_python=$2 ;;
        --data) data=$2 ;;
        *) echo "image_bench.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift 2
done
[[ -n $data ]] || data=$build/image-bench-data/$rows-$source
if [[ ! -f $data/.complete ]]; then
    rm -rf "$data"
    "$build/bin/sluice" gen images --out "$data" --rows "$rows" --classes 5 --size "$source" --format jpeg --seed 1 >/dev/null
    touch "$data/.complete"
fi
if ((cold)) && ! { sync && echo 3 >/proc/sys/vm/drop_caches; } 2>/dev/null; then
    echo "image_bench.sh: --cold drops the page cache, which needs root" >&2
    exit 2
fi
: >"$out"
if ((cold)); then
    warm() { sync; echo 3 >/proc/sys/vm/drop_caches; }
else
    warm() { find "$data" -name '*.jpg' -exec cat {} + >/dev/null; }
fi
common=(--size "$size" --seconds "$seconds")
for ((r = 1; r <= runs; ++r)); do
    echo "run $r/$runs" >&2
    warm
    PYTHONPATH=$build/python /usr/bin/python3 "$here/peers/image_peers.py" sluice "$data" "${common[@]}" --threads "$(nproc)" >>"$out"
    warm
    TF_CPP_MIN_LOG_LEVEL=3 "$peer_python" "$here/peers/image_peers.py" tfdata "$data" "${common[@]}" >>"$out" 2>/dev/null
    for tool in torch_pil torch_decode_jpeg; do
        warm
        "$peer_python" "$here/peers/image_peers.py" "$tool" "$data" "${common[@]}" --workers "$(nproc)" >>"$out"
    done
done
/usr/bin/python3 "$here/summarize_images.py" "$out"
