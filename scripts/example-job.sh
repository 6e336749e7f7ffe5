#!/usr/bin/env bash
# The main job with a built Sluice (scripts/run-example.sh installs and builds first): writes the
# example datasets (scripts/generate-example-data.sh), inspects the classic one, previews the
# classic example pipeline's first batch, profiles the pipeline, trains the example projects
# headless, and then, where there is a display, opens the workbench on the regression example.
# Environment: SLUICE (the binary, default build/bin/sluice), SLUICE_EXAMPLE_SIZE,
# SLUICE_EXAMPLE_DATA (the classic dataset's folder; the project is pointed at it), SLUICE_DATA_ROOT
# and SLUICE_EXAMPLE_ROWS (the training datasets, as generate-example-data.sh takes them),
# SLUICE_EXAMPLE_SECONDS (profiling time), SLUICE_EXAMPLE_TRAIN (the projects to train, default
# "regression imbalanced-classifier sensor-autoencoder image-classifier recommender"; empty: none), SLUICE_EXAMPLE_WORKBENCH
# (0: no window even with a display).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sluice="${SLUICE:-$root/build/bin/sluice}"
data="$(realpath -m "${SLUICE_EXAMPLE_DATA:-$root/projects/data/classic}")"
size="${SLUICE_EXAMPLE_SIZE:-512M}"
project="$root/projects/classic-pipeline.sluice"

echo "== the example datasets (a $size two-input / two-output regression set in $data for the pipeline, small ones to train on)"
SLUICE="$sluice" SLUICE_EXAMPLE_DATA="$data" SLUICE_EXAMPLE_SIZE="$size" bash "$root/scripts/generate-example-data.sh"
# The project reads projects/data/classic; a dataset written elsewhere is pointed at with --set.
elsewhere=()
if [ "$data" != "$root/projects/data/classic" ]; then
  json_path() { local p="${1//\\/\\\\}"; printf '"%s"' "${p//\"/\\\"}"; }
  elsewhere=(--set "nodes.arrays.features={\"x\": $(json_path "$data/x.npy"), \"meta\": $(json_path "$data/meta.npy"), \"y\": $(json_path "$data/y.npy"), \"score\": $(json_path "$data/score.npy")}")
fi
echo
echo "== sluice inspect"
"$sluice" inspect "$data"/*.npy
echo
echo "== sluice preview: the first batch the pipeline emits"
"$sluice" preview "$project" "${elsewhere[@]}"
echo
echo "== sluice run --profile: the classic pipeline for ${SLUICE_EXAMPLE_SECONDS:-10} seconds, per-stage figures and the bottleneck"
"$sluice" run "$project" --profile --seconds "${SLUICE_EXAMPLE_SECONDS:-10}" "${elsewhere[@]}"

# Training: each example trains in well under a minute on 2 cores; the run's files (metrics.csv,
# events.jsonl, weights.npz, checkpoints/, the project as run) go to projects/runs/ (ignored by git).
stamp="$(date +%Y%m%d-%H%M%S)"
for example in ${SLUICE_EXAMPLE_TRAIN-regression imbalanced-classifier sensor-autoencoder image-classifier recommender}; do
  echo
  echo "== sluice run: training projects/$example.sluice"
  "$sluice" run "$root/projects/$example.sluice" --out "$root/projects/runs/$example-$stamp"
  echo "   run files: projects/runs/$example-$stamp/"
done

# The workbench on the regression example, where a window can be shown.
if [ "${SLUICE_EXAMPLE_WORKBENCH:-1}" != 0 ] && { [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; }; then
  echo
  echo "== the workbench on projects/regression.sluice (press F5 to run it; close the window to end)"
  "$sluice" "$root/projects/regression.sluice"
else
  echo
  echo "(no display: the workbench was not opened; on a desktop, 'build/bin/sluice projects/regression.sluice' opens it)"
fi
