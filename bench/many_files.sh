#!/usr/bin/env bash
# Many small files: one pass of interleave, global_shuffle and shard pipelines over N .npy
# files (written once with numpy), each under GNU time for its peak resident memory. Each file
# is mapped once per process, so N files need N of the kernel's vm.max_map_count mappings.
#
# usage: bench/many_files.sh [--files 10000] [--rows 100] [--width 256] [--data DIR] [--threads T]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
files=10000 rows=100 width=256 data=$root/build/many-files threads=$(nproc)
while [[ $# -gt 0 ]]; do
    [[ $# -ge 2 ]] || { echo "many_files.sh: $1 needs a value" >&2; exit 2; }
    case $1 in
        --files) files=$2 ;; --rows) rows=$2 ;; --width) width=$2 ;; --data) data=$2 ;; --threads) threads=$2 ;;
        *) echo "many_files.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift 2
done
sluice=${SLUICE:-$root/build/bin/sluice}
# Debian's python3 has numpy; a python3 first on PATH (a pyenv shim) may not.
py=${SLUICE_PYTHON:-}
for cand in python3 /usr/bin/python3; do
    [[ -z $py ]] && command -v "$cand" >/dev/null && "$cand" -c 'import numpy' 2>/dev/null && py=$cand
done
[[ -n $py ]] || { echo "many_files.sh: no python with numpy (set SLUICE_PYTHON)" >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "many_files.sh: needs GNU time (Debian package 'time')" >&2; exit 1; }

if [[ ! -f $data/parts/p$(printf %05d $((files - 1))).npy ]]; then
    mkdir -p "$data/parts"
    "$py" - "$data/parts" "$files" "$rows" "$width" <<'PY'
import sys, numpy as np
out, n, rows, width = sys.argv[1], *map(int, sys.argv[2:])
rng = np.random.default_rng(0)
for i in range(n):
    np.save(f"{out}/p{i:05d}.npy", rng.standard_normal((rows, width), dtype=np.float32))
PY
fi
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f", $2 / 1048576}' /proc/meminfo) GiB RAM; vm.max_map_count $(cat /proc/sys/vm/max_map_count)"
echo "data: $files files of $rows x $width float32 ($(du -sh "$data/parts" | cut -f1))"

run() { # NAME MIDDLE-NODE-JSON
    cat > "$data/$1.sluice" <<JSON
{"format": "sluice-project", "version": 1, "name": "$1",
 "pipeline": {"nodes": [
   {"id": "files", "op": "from_npy", "params": {"features": {"x": "parts/*.npy"}}},
   $2,
   {"id": "batch", "op": "batch", "params": {"batch_size": 1024}},
   {"id": "prefetch", "op": "prefetch", "params": {"buffer_size": "AUTOTUNE"}}],
  "edges": [["files", "mid"], ["mid", "batch"], ["batch", "prefetch"]]}}
JSON
    local start end
    start=$(date +%s.%N)
    /usr/bin/time -f "%M" -o "$data/rss" "$sluice" run "$data/$1.sluice" --profile --epochs 1 --threads "$threads" --json > "$data/out.jsonl"
    end=$(date +%s.%N)
    printf '%-16s %8.1f s  peak RSS %6d MiB  %s\n' "$1" "$(echo "$end - $start" | bc)" "$(($(cat "$data/rss") / 1024))" \
        "$(tail -n 1 "$data/out.jsonl" | "$py" -c 'import json,sys; e=json.load(sys.stdin); print(e.get("status"), "-", sum(s["elements"] for s in e["stats"]["stages"] if s["id"]=="files"), "rows")')"
}
run interleave '{"id": "mid", "op": "interleave", "params": {"cycle_length": 8, "num_parallel_calls": "AUTOTUNE"}}'
run global_shuffle '{"id": "mid", "op": "global_shuffle", "params": {"seed": 1}}'
run shard '{"id": "mid", "op": "shard", "params": {"num_shards": 4, "index": 0}}'
