#!/usr/bin/env bash
# `sluice convert` of a CSV file to TFRecord shards of tf.train.Example against the same
# conversion in Python (bench/peers/convert_peers.py: tf.data's CsvDataset + tf.io.TFRecordWriter,
# and a pool of pandas + TFRecordWriter processes), on the same threads. The CSV is the
# recommender log of `sluice gen interactions` (9 columns: ints, floats, strings; ~39 bytes a row),
# made once if missing. Sluice converts the whole file RUNS times; the Python peers, far slower,
# convert its first --peer-rows rows (rows/s is what is compared). --cold drops the file from the
# page cache before each run (the larger-than-RAM setting: the file is then read from storage).
# Raw JSON lines to OUT; a table on stdout.
#
# usage: bench/convert_bench.sh BUILD_DIR DATA_DIR OUT.jsonl [--rows 51000000] [--runs 3] [--threads 2]
#                               [--shards 2] [--peer-rows 2000000] [--cold] [--no-peers]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[[ $# -ge 3 ]] || { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
build=$(cd "$1" && pwd) data=$2 out=$3
shift 3
rows=51000000 runs=3 threads=2 shards=2 peer_rows=2000000 cold=0 peers=1
while [[ $# -gt 0 ]]; do
    case $1 in
        --cold) cold=1; shift; continue ;;
        --no-peers) peers=0; shift; continue ;;
    esac
    [[ $# -ge 2 ]] || { echo "convert_bench.sh: $1 needs a value" >&2; exit 2; }
    case $1 in
        --rows) rows=$2 ;;
        --runs) runs=$2 ;;
        --threads) threads=$2 ;;
        --shards) shards=$2 ;;
        --peer-rows) peer_rows=$2 ;;
        *) echo "convert_bench.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift 2
done
csv="$data/interactions.csv"
[[ -f $csv ]] || "$build/bin/sluice" gen interactions --out "$data" --rows "$rows" --seed 5 --users 1000000 --items 100000
bytes=$(stat -c %s "$csv")
drop() { [[ $cold == 1 ]] && { sync; echo 3 >/proc/sys/vm/drop_caches; } || true; }
: >"$out"
for ((r = 1; r <= runs; ++r)); do
    echo "run $r/$runs" >&2
    rm -rf "$data/records"
    drop
    start=$(date +%s.%N)
    "$build/bin/sluice" convert "$csv" --to tfrecord --shards "$shards" --threads "$threads" --out "$data/records" >/dev/null
    end=$(date +%s.%N)
    /usr/bin/python3 -c 'import json, sys; s = float(sys.argv[2]) - float(sys.argv[1]); b = int(sys.argv[3]);
m = json.load(open(sys.argv[4])); n = m["records"]
print(json.dumps({"tool": "sluice", "rows": n, "seconds": s, "rows_per_s": n / s, "mb_per_s": b / 1e6 / s,
                  "threads": int(sys.argv[5]), "shards": len(m["shards"]), "cold": sys.argv[6] == "1"}))' \
        "$start" "$end" "$bytes" "$data/records/manifest.json" "$threads" "$cold" >>"$out"
    rm -rf "$data/records"
    if [[ $peers == 1 ]]; then
        drop
        python3 "$here/peers/convert_peers.py" "$csv" "$data/records-peer" --shards "$shards" --threads "$threads" --rows "$peer_rows" >>"$out"
    fi
done
/usr/bin/python3 - "$out" <<'PY'
import json, statistics, sys
from collections import defaultdict
groups = defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    groups[(r["tool"], r["rows"])].append(r)
print("| tool | rows | rows/s (median) | CSV MB/s | threads | runs |")
print("|---|---:|---:|---:|---:|---:|")
for (tool, rows), rs in sorted(groups.items()):
    print(f"| {tool} | {rows:,} | {statistics.median(r['rows_per_s'] for r in rs):,.0f} | "
          f"{statistics.median(r['mb_per_s'] for r in rs):,.0f} | {rs[0]['threads']} | {len(rs)} |")
PY
