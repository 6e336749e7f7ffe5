#!/usr/bin/env bash
# The main job, from nothing: installs what is missing, builds Sluice, then runs
# scripts/example-job.sh with it: writes the example datasets, inspects the classic one, previews
# the classic example pipeline's first batch, profiles the pipeline, trains the example projects
# headless, and, where there is a display, opens the workbench on the regression example.
# Environment: SLUICE_EXAMPLE_SIZE, SLUICE_EXAMPLE_DATA (the classic dataset), SLUICE_EXAMPLE_SECONDS
# (profiling time), SLUICE_EXAMPLE_TRAIN (the projects to train, default
# "regression imbalanced-classifier sensor-autoencoder image-classifier"; empty: none), SLUICE_EXAMPLE_WORKBENCH
# (0: no window even with a display).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

bash "$root/scripts/setup-debian.sh"
bash "$root/scripts/build.sh" release

SLUICE="$root/build/bin/sluice" exec bash "$root/scripts/example-job.sh"
