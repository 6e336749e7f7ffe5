#!/usr/bin/env bash
# `sluice convert FILE.parquet --to npy --features ... --shards N` on a Parquet file larger than
# RAM, read from a cold page cache, against the same conversion with pyarrow + numpy at their
# strongest (bench/peers/parquet_convert_peer.py: whole row groups, only the chosen columns,
# pyarrow's thread pool). The file is bench/parquet_bench.sh's big.parquet (16 float32 columns
# f0..f15 and an int64 label); the chosen columns are converted, row r to shard r mod N. Each tool
# in each run: the file evicted from the page cache, the output folder removed, then timed.
# Raw JSON lines to OUT; a table of medians on stdout.
#
# usage: bench/parquet_convert_bench.sh BUILD_DIR FILE.parquet OUT.jsonl [--runs 3] [--threads 2]
#            [--shards 2] [--features f0,f1,f2,f3,label] [--scratch DIR]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[[ $# -ge 3 ]] || { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
build=$(cd "$1" && pwd) file=$2 out=$3
shift 3
runs=3 threads=2 shards=2 features=f0,f1,f2,f3,label scratch=$(dirname "$file")/convert-out
while [[ $# -gt 0 ]]; do
    [[ $# -ge 2 ]] || { echo "parquet_convert_bench.sh: $1 needs a value" >&2; exit 2; }
    case $1 in
        --runs) runs=$2 ;;
        --threads) threads=$2 ;;
        --shards) shards=$2 ;;
        --features) features=$2 ;;
        --scratch) scratch=$2 ;;
        *) echo "parquet_convert_bench.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift 2
done
[[ -f $file ]] || { echo "parquet_convert_bench.sh: no $file (bench/parquet_bench.sh writes it)" >&2; exit 2; }
python=python3
cold() {
    rm -rf "$scratch"
    sync
    { echo 3 >/proc/sys/vm/drop_caches; } 2>/dev/null || true
    "$python" "$here/larger_than_ram_helper.py" evict "$file" >/dev/null
}
: >"$out"
for ((r = 1; r <= runs; ++r)); do
    echo "run $r/$runs" >&2
    cold
    start=$(date +%s.%N)
    "$build/bin/sluice" convert "$file" --to npy --features "$features" --shards "$shards" --threads "$threads" --out "$scratch" >/dev/null
    sync # the shards on disk, as the peer's after close: both pay for writing
    end=$(date +%s.%N)
    "$python" -c 'import json, sys; s = float(sys.argv[2]) - float(sys.argv[1]); m = json.load(open(sys.argv[3]))
n = m.get("records", m.get("rows"))
print(json.dumps({"tool": "sluice", "rows": n, "seconds": s, "rows_per_s": n / s, "threads": int(sys.argv[4]), "shards": int(sys.argv[5])}))' \
        "$start" "$end" "$scratch/manifest.json" "$threads" "$shards" >>"$out"
    cold
    start=$(date +%s.%N)
    "$python" "$here/peers/parquet_convert_peer.py" "$file" "$scratch" --features "$features" --shards "$shards" --threads "$threads" >"$scratch.peer.json"
    sync
    end=$(date +%s.%N)
    "$python" -c 'import json, sys; r = json.load(open(sys.argv[3])); s = float(sys.argv[2]) - float(sys.argv[1])
r.update(seconds=s, rows_per_s=r["rows"] / s); print(json.dumps(r))' "$start" "$end" "$scratch.peer.json" >>"$out"
    rm -f "$scratch.peer.json"
done
rm -rf "$scratch"
"$python" - "$out" "$file" <<'PY'
import json, os, statistics, sys
from collections import defaultdict
runs = defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    runs[r["tool"]].append(r)
size = os.path.getsize(sys.argv[2])
print(f"input: {sys.argv[2]}, {size / 2**30:.1f} GiB")
print("| tool | threads | rows | seconds (median) | rows/s (median) | runs |")
print("|---|---:|---:|---:|---:|---:|")
for tool, rs in runs.items():
    print(f"| {tool} | {rs[0]['threads']} | {rs[0]['rows']:,} | {statistics.median(r['seconds'] for r in rs):.1f} | "
          f"{statistics.median(r['rows_per_s'] for r in rs):,.0f} | {len(rs)} |")
PY
