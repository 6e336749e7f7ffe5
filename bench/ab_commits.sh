#!/usr/bin/env bash
# A/B of two builds of Sluice on the same machine, in the same run: the classic pipeline
# (`sluice bench pipeline`: from_npy → global_shuffle → batch(256) → prefetch, page-cached) and
# the MLP training step (`sluice bench train`: 128-256-10, batch 64, Adam), rounds alternating
# between the builds so that a machine getting busier or quieter weighs on both alike. Prints
# each round and the medians.
#   bench/ab_commits.sh BASE_SLUICE NEW_SLUICE FILE.npy [ROUNDS=5] [THREADS=2]
# FILE.npy: rows to read, e.g. `sluice gen regression --out d --rows 4000000 --feature x:64`.
set -euo pipefail
base=$1 new=$2 file=$3 rounds=${4:-5} threads=${5:-2}
for exe in "$base" "$new"; do
  [[ -x $exe ]] || { echo "ab_commits: $exe: not an executable" >&2; exit 2; }
done
[[ -f $file ]] || { echo "ab_commits: $file: no such file" >&2; exit 2; }
cat "$file" >/dev/null # page-cached for both sides
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for ((r = 1; r <= rounds; r++)); do
  for side in base new; do
    exe=$base
    [[ $side == new ]] && exe=$new
    pipeline=$("$exe" bench pipeline "$file" --seconds 5 --threads "$threads" --json |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["samples_per_s"])')
    train=$("$exe" bench train --steps 2000 --warmup 50 --threads "$threads" --json |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["step_ms_median"])')
    echo "$side $pipeline $train" | tee -a "$results"
  done
done
python3 - "$results" "$threads" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
for side in ("base", "new"):
    p = [float(r[1]) for r in rows if r[0] == side]
    t = [float(r[2]) for r in rows if r[0] == side]
    print(f"{side}: classic pipeline median {statistics.median(p) / 1e6:.2f} M samples/s; "
          f"MLP step median {statistics.median(t) * 1000:.1f} us ({len(p)} rounds, {sys.argv[2]} threads)")
PY
