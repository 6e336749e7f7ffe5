#!/usr/bin/env bash
# The main job, from nothing: installs what is missing, builds Sluice, writes an example
# multi-input / multi-output dataset, and shows what `sluice inspect` and `sluice bench read`
# say about it. (Once the workbench exists, this opens it on an example project.)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

bash "$root/scripts/setup-debian.sh"
bash "$root/scripts/build.sh" release

sluice="$root/build/bin/sluice"
data="${SLUICE_EXAMPLE_DATA:-$root/example-data}"
size="${SLUICE_EXAMPLE_SIZE:-512M}"

echo "== sluice gen: a $size regression dataset with two inputs and two outputs in $data"
"$sluice" gen regression --out "$data" --size "$size" --seed 1 \
  --feature x:256 --feature meta:8:float16 --target y:4 --target score:scalar:float64
echo
echo "== sluice inspect --stats"
"$sluice" inspect --stats "$data"/*.npy
echo
echo "== sluice bench read (sequential, then shuffled)"
"$sluice" bench read "$data/x.npy" --order sequential --batch 256 --seconds 3
"$sluice" bench read "$data/x.npy" --order shuffled --batch 256 --seconds 3
