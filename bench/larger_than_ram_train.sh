#!/usr/bin/env bash
# End-to-end training on data larger than RAM: the regression example's model
# (projects/regression.sluice: x 32 + meta 8 in, y 4 + score 1 out, 2 mirrored replicas) on a
# dataset of --size written by `sluice gen`, against the same pipeline profiled alone, each on
# a cold page cache, alternating, --runs times. Prints rows/s of both and their ratio.
#
# usage: bench/larger_than_ram_train.sh [--size 30G] [--data DIR] [--runs 3] [--seconds 20]
#                                       [--steps 1500] [--threads N]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
size=30G data=$root/build/big-reg runs=3 seconds=20 steps=1500 threads=$(nproc)
while [[ $# -gt 0 ]]; do
    [[ $# -ge 2 ]] || { echo "larger_than_ram_train.sh: $1 needs a value" >&2; exit 2; }
    case $1 in
        --size) size=$2 ;; --data) data=$2 ;; --runs) runs=$2 ;; --seconds) seconds=$2 ;;
        --steps) steps=$2 ;; --threads) threads=$2 ;;
        *) echo "larger_than_ram_train.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift 2
done
sluice=${SLUICE:-$root/build/bin/sluice}
if [[ ! -f $data/x.npy ]]; then
    "$sluice" gen regression --out "$data" --size "$size" --feature x:32 --feature meta:8 --target y:4 --target score:1
fi
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f", $2 / 1048576}' /proc/meminfo) GiB RAM; data: $(du -sh "$data" | cut -f1) in $data"

# The example project with its data paths pointing at the big dataset, one epoch of --steps.
project=$data/regression-larger-than-ram.sluice
python3 - "$root/projects/regression.sluice" "$project" "$steps" <<'PY'
import json, sys
src, dst, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
p = json.load(open(src))
for name in p["pipeline"]["nodes"][0]["params"]["features"]:
    p["pipeline"]["nodes"][0]["params"]["features"][name] = name + ".npy"
p["name"] = "regression-larger-than-ram"
p["training"].update(epochs=1, steps_per_epoch=steps)
p["training"].pop("checkpoint", None)
json.dump(p, open(dst, "w"), indent=1)
PY

# A cold start for each: the whole page cache dropped where allowed (root), the data files
# evicted in any case (posix_fadvise needs no privileges).
cold() {
    sync
    { echo 3 > /proc/sys/vm/drop_caches; } 2>/dev/null || true
    python3 -c 'import os, sys
for path in sys.argv[1:]:
    fd = os.open(path, os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)' "$data"/*.npy
}
for ((run = 1; run <= runs; run++)); do
    cold
    pipeline=$("$sluice" run "$project" --profile --seconds "$seconds" --threads "$threads" --json | tail -n 1 |
        python3 -c 'import json,sys; e=json.load(sys.stdin); print(next(s["elements_per_s"] for s in e["stats"]["stages"] if s["id"]=="arrays"))')
    cold
    training=$("$sluice" run "$project" --threads "$threads" --json |
        python3 -c 'import json,sys
rate = None
for line in sys.stdin:
    e = json.loads(line)
    if e.get("event") == "epoch_end": rate = e.get("samples_per_s")
print(rate)')
    python3 -c "import sys; p, t = float(sys.argv[1]), float(sys.argv[2]); print(f'run {sys.argv[3]}: pipeline alone {p:,.0f} rows/s, training {t:,.0f} samples/s, training / pipeline {t / p:.0%}')" \
        "$pipeline" "$training" "$run"
done
