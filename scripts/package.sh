#!/usr/bin/env bash
# Builds the Debian package and the relocatable archive and prints their paths.
# Usage: scripts/package.sh [release|sanitize|BUILD_DIR] [OUT_DIR]
#   release   → build/          (the default; what users get)
#   sanitize  → build-sanitize/ (what the test suite packages to check the packaging itself)
#   BUILD_DIR → any configured build folder
#   OUT_DIR   → where the packages go (default: BUILD_DIR/packages)
# A missing release folder is configured and built first with scripts/build.sh.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

case "${1:-release}" in
  release)  dir="$root/build" ;;
  sanitize) dir="$root/build-sanitize" ;;
  *)        dir="$1" ;;
esac
if [[ ! -f "$dir/CMakeCache.txt" ]]; then
  [[ "$dir" == "$root/build" ]] || { echo "package.sh: $dir is not a configured build folder" >&2; exit 2; }
  bash "$root/scripts/build.sh" release
fi
dir="$(cd "$dir" && pwd)"
out="${2:-$dir/packages}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

# Only what the packages hold; the rest of the build (tests, benchmarks) is not needed. The
# Python package goes in where the build has it.
targets=(sluice sluice_manpage sluice_icons)
if cmake --build "$dir" --target help 2>/dev/null | grep -qw '_sluice'; then
    targets+=(_sluice)
fi
cmake --build "$dir" --target "${targets[@]}"

rm -f "$out"/sluice_*.deb "$out"/sluice-*.tar.gz
log="$out/cpack.log"
if ! (cd "$dir" && cpack --config CPackConfig.cmake -G "DEB;TGZ" -B "$out") >"$log" 2>&1; then
  cat "$log" >&2
  exit 1
fi
rm -rf "$out/_CPack_Packages" # the staging trees: as big as the packages, never needed after
ls "$out"/sluice_*.deb "$out"/sluice-*.tar.gz
