#!/usr/bin/env bash
# Writes seed.cache, the fuzz_cache_file seed: a real cache file of Sluice's own, of elements
# with an int64 scalar, 3 float32 values and 2 strings, written by `sluice run` through a cache
# stage. Run from anywhere: bash tests/data/cache/make_seed.sh [path/to/sluice]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
sluice="${1:-$here/../../../build/bin/sluice}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
printf 'id,x0,x1,x2,name,tag\n1,0.5,1.5,2.5,a,north\n2,-1,0,1,bb,south\n3,3,2,1,ccc,east\n' > "$work/rows.csv"
cat > "$work/seed.sluice" <<'JSON'
{"format": "sluice-project", "version": 1, "name": "cache seed",
 "pipeline": {"nodes": [
   {"id": "rows", "op": "from_csv", "params": {"filenames": "rows.csv", "columns": {"id": "int64", "x0": "float32", "x1": "float32", "x2": "float32", "name": "string", "tag": "string"}}},
   {"id": "cache", "op": "cache", "params": {"filename": "seed.cache"}}],
  "edges": [["rows", "cache"]]}}
JSON
"$sluice" run "$work/seed.sluice" --profile > /dev/null
cp "$work/seed.cache" "$here/seed.cache"
echo "wrote $here/seed.cache"
