#!/usr/bin/env bash
# Writes the data of the example projects with `sluice gen` into projects/data/ (ignored by git).
# A dataset is skipped when it was already written with the same arguments (a .gen-args stamp
# in its folder records them), so running this again is cheap.
#   bash scripts/generate-example-data.sh [classic|regression|imbalanced|sensors|images|recommender]...   (default: all)
# Environment: SLUICE (the binary, default build/bin/sluice), SLUICE_EXAMPLE_SIZE (size of the
# classic pipeline dataset, default 512M), SLUICE_EXAMPLE_DATA (its folder, default
# projects/data/classic), SLUICE_DATA_ROOT (where the training datasets go, default
# projects/data), SLUICE_EXAMPLE_ROWS (rows of each training dataset instead of its own size:
# the test suite trains the examples on small copies).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sluice="${SLUICE:-$root/build/bin/sluice}"
data="${SLUICE_DATA_ROOT:-$root/projects/data}"
rows() { echo "${SLUICE_EXAMPLE_ROWS:-$1}"; }

if [[ ! -x "$sluice" ]]; then
  echo "generate-example-data: $sluice not found; build first (bash scripts/build.sh release)" >&2
  exit 2
fi

# gen FOLDER KIND ARGS...: writes FOLDER unless its stamp says it holds exactly this dataset.
gen() {
  local folder="$1"; shift
  local args="$*"
  if [[ -f "$folder/.gen-args" && "$(cat "$folder/.gen-args")" == "$args" ]]; then
    echo "== $folder: up to date (sluice gen $args)"
    return
  fi
  echo "== sluice gen $args --out $folder"
  rm -f "$folder/.gen-args"
  "$sluice" gen "$@" --out "$folder"
  echo "$args" > "$folder/.gen-args"
}

which=("$@")
[[ ${#which[@]} -eq 0 ]] && which=(classic regression imbalanced sensors images recommender)
for name in "${which[@]}"; do
  case "$name" in
    classic)
      # The classic pipeline (projects/classic-pipeline.sluice): big enough to profile.
      gen "${SLUICE_EXAMPLE_DATA:-$data/classic}" regression --size "${SLUICE_EXAMPLE_SIZE:-512M}" --seed 1 \
        --feature x:256 --feature meta:8:float16 --target y:4 --target score:scalar:float64 ;;
    regression)
      # projects/regression.sluice: two inputs, two regression targets, 2M rows (360 MB): about 10 s
      # of training on 2 cores, long enough to watch in the workbench.
      gen "$data/regression" regression --rows "$(rows 2000000)" --seed 1 \
        --feature x:32 --feature meta:8 --target y:4 --target score:scalar ;;
    imbalanced)
      # projects/imbalanced-classifier.sluice: 3 classes, 90% of the rows in class 0; 1.5M rows (132 MB).
      gen "$data/imbalanced" classification --rows "$(rows 1500000)" --seed 2 --feature x:20 --target label:3 --imbalance 0.9 ;;
    sensors)
      # projects/sensor-autoencoder.sluice: 24-step windows of 4 channels, 2% anomalous.
      gen "$data/sensors" sensors --rows "$(rows 20000)" --seed 3 --timesteps 24 --channels 4 --anomalies 0.02 --noise 0.05 ;;
    images)
      # projects/image-classifier.sluice: 64x64 JPEG pictures of 5 shapes, one folder a class.
      gen "$data/shapes" images --rows "$(rows 6000)" --seed 4 --classes 5 --size 64x64 --format jpeg ;;
    recommender)
      # projects/recommender.sluice: a recommender log (interactions.csv, 200k rows, 8 MB) of 5000
      # users and 1000 items; clicks and ratings follow hidden user and item factors.
      gen "$data/recommender" interactions --rows "$(rows 200000)" --seed 5 --users 5000 --items 1000 ;;
    *)
      echo "generate-example-data: unknown dataset '$name' (known: classic, regression, imbalanced, sensors, images, recommender)" >&2
      exit 2 ;;
  esac
done
