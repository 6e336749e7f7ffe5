#!/usr/bin/env bash
# Configures and builds Sluice. Usage: scripts/build.sh [release|sanitize] [extra cmake args...]
#   release   → build/          (RelWithDebInfo; what the main job and the benchmarks run)
#   sanitize  → build-sanitize/ (AddressSanitizer + UndefinedBehaviorSanitizer; what the test suite runs)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
flavour="${1:-release}"
shift || true

case "$flavour" in
  release)  dir="$root/build";          args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
  sanitize) dir="$root/build-sanitize"; args=(-DCMAKE_BUILD_TYPE=Debug -DSLUICE_SANITIZE=ON) ;;
  *) echo "usage: scripts/build.sh [release|sanitize] [cmake args...]" >&2; exit 2 ;;
esac

# Apache Arrow for from_parquet (Debian has none); the build leaves Parquet out where it cannot be had.
bash "$root/scripts/fetch-arrow.sh"

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
# Keep the generator of an existing build folder (CMake refuses to switch).
[[ -f "$dir/CMakeCache.txt" ]] && generator=()

jobs="${SLUICE_BUILD_JOBS:-$(nproc)}"
cmake -S "$root" -B "$dir" "${generator[@]}" "${args[@]}" "$@"
cmake --build "$dir" --parallel "$jobs"
