#!/usr/bin/env bash
# Pictures of the workbench for the README and the guides: starts Sluice under a virtual X
# display (Xvfb) on an example project, runs it, and saves the window when the run has ended.
#
#   scripts/screenshot.sh [PROJECT] [OUT.png]
#   scripts/screenshot.sh --all     # the README's four: 1280x800 and 1600x1000, light and dark
#
# Defaults: projects/regression.sluice (its small example data is written first when missing)
# and docs/images/workbench-<size>-<theme>.png. Environment: SLUICE (the executable; default build/bin/sluice),
# SLUICE_SCREENSHOT_THEME (light or dark; default light), SLUICE_SCREENSHOT_SIZE (WxH).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ "${1:-}" = "--all" ]; then
  for size in 1280x800 1600x1000; do
    for theme in light dark; do
      SLUICE_SCREENSHOT_SIZE=$size SLUICE_SCREENSHOT_THEME=$theme \
        bash "$0" "$root/projects/regression.sluice" "$root/docs/images/workbench-$size-$theme.png"
    done
  done
  exit 0
fi
project="${1:-$root/projects/regression.sluice}"
sluice="${SLUICE:-$root/build/bin/sluice}"
size="${SLUICE_SCREENSHOT_SIZE:-1600x1000}"
out="${2:-$root/docs/images/workbench-$size-${SLUICE_SCREENSHOT_THEME:-light}.png}"

command -v xvfb-run >/dev/null || { echo "screenshot.sh: xvfb-run is missing (scripts/setup-debian.sh installs xvfb)" >&2; exit 2; }
[ -x "$sluice" ] || { echo "screenshot.sh: $sluice is not built (scripts/build.sh release)" >&2; exit 2; }
if [ "$project" = "$root/projects/regression.sluice" ] && [ ! -e "$root/projects/data/regression" ]; then
  SLUICE="$sluice" bash "$root/scripts/generate-example-data.sh" regression
fi
mkdir -p "$(dirname "$out")"

# A settings folder of its own: the picture shows the default layout in the chosen theme,
# whatever the user's own workbench remembers.
settings="$(mktemp -d)"
trap 'rm -rf "$settings"' EXIT
mkdir -p "$settings/sluice"
printf '[General]\ntheme=%s\n' "${SLUICE_SCREENSHOT_THEME:-light}" > "$settings/sluice/sluice.conf"

XDG_CONFIG_HOME="$settings" XDG_DATA_HOME="$settings" QT_QPA_PLATFORM=xcb \
  xvfb-run -a -s "-screen 0 ${size}x24" "$sluice" "$project" --run --screenshot "$out" --wait 1.5
echo "wrote $out"
