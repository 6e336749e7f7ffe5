#!/usr/bin/env bash
# The main job, from nothing: installs what is missing, builds Sluice, writes the example
# multi-input / multi-output dataset, inspects it, previews the classic example pipeline's first
# batch and profiles the pipeline (headless: the workbench window arrives with the GUI work).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

bash "$root/scripts/setup-debian.sh"
bash "$root/scripts/build.sh" release

sluice="$root/build/bin/sluice"
data="${SLUICE_EXAMPLE_DATA:-$root/projects/data/classic}"
size="${SLUICE_EXAMPLE_SIZE:-512M}"
project="$root/projects/classic-pipeline.sluice"

if [[ ! -f "$data/x.npy" || ! -f "$data/.size-$size" ]]; then
  echo "== sluice gen: a $size regression dataset with two inputs and two outputs in $data"
  "$sluice" gen regression --out "$data" --size "$size" --seed 1 \
    --feature x:256 --feature meta:8:float16 --target y:4 --target score:scalar:float64
  rm -f "$data"/.size-*; touch "$data/.size-$size"
fi
echo
echo "== sluice inspect"
"$sluice" inspect "$data"/*.npy
echo
echo "== sluice preview: the first batch the pipeline emits"
"$sluice" preview "$project"
echo
# The workbench window arrives with the GUI work; until then the example runs headless.
echo "== sluice run --profile: the classic pipeline for 10 seconds, per-stage figures and the bottleneck"
"$sluice" run "$project" --profile --seconds "${SLUICE_EXAMPLE_SECONDS:-10}"
