#!/usr/bin/env bash
# The whole test suite from nothing: installs what is missing, builds with AddressSanitizer
# and UndefinedBehaviorSanitizer, and runs every test (Qt Test units and bounded libFuzzer
# runs) through ctest. `.ci/run` calls exactly this.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

bash "$root/scripts/setup-debian.sh"
# Independent readers the tests compare with that Debian lacks (safetensors), into .deps/python.
bash "$root/scripts/fetch-python-test-deps.sh"
bash "$root/scripts/build.sh" sanitize

# Leak checking stays on for our code; Qt's and oneTBB's process-lifetime singletons are not leaks.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$root/tests/lsan.supp:print_suppressions=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export QT_QPA_PLATFORM=offscreen
cd "$root/build-sanitize"
ctest --output-on-failure --parallel "$(nproc)" "$@"
