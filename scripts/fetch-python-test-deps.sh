#!/usr/bin/env bash
# Python packages the test suite uses as independent references that Debian does not package,
# installed from PyPI for Debian's Python 3.11, never into the system's Python:
#   .deps/python  safetensors (Hugging Face's reader checks the files `sluice export` writes), on
#                 the pytest suite's PYTHONPATH;
#   .deps/keras   Keras 3 with its JAX backend (CPU), which loads the .keras archives `sluice export`
#                 writes; only the subprocesses that run Keras see it (it brings its own numpy);
#   .deps/onnx    onnxruntime, which runs the ONNX graphs `sluice export` writes, and onnx, whose
#                 checker validates them, likewise;
#   .deps/tensorflow  TensorFlow (CPU), for sluice.tf's tests (a pytest run of their own, beside
#                 Debian's numpy: the wheel's own numpy is left out).
# A reference that cannot be had fails the run under CI=true (scripts/lib/reference.sh); elsewhere
# the script says so and exits 0, and the tests that need it report a skip.
# Usage: scripts/fetch-python-test-deps.sh [DIR] (default .deps/python; Keras goes beside it)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/lib/reference.sh"
dir="${1:-$root/.deps/python}"
pip=()
for python in python3 /usr/bin/python3; do
  if command -v "$python" >/dev/null && "$python" -m pip --version >/dev/null 2>&1; then
    pip=("$python" -m pip)
    break
  fi
done

# fetch DIR PACKAGE...: the packages and their dependencies into DIR, once.
fetch() {
  local target=$1
  shift
  local stamp="$target/.installed"
  [[ -f $stamp && "$(cat "$stamp")" == "$*" ]] && return 0
  if ((${#pip[@]} == 0)); then
    reference_missing "$*" "no pip found" || return 0
  fi
  mkdir -p "$(dirname "$target")"
  rm -rf "$target.new"
  # Wheels for CPython 3.11 on Linux (Debian 12's Python, which the suite runs), whatever runs pip.
  if ! "${pip[@]}" install --quiet --disable-pip-version-check --only-binary :all: --python-version 3.11 \
       --platform manylinux_2_17_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_28_x86_64 \
       --platform manylinux2014_x86_64 --target "$target.new" "$@" >"$target.log" 2>&1; then
    cat "$target.log" >&2
    rm -rf "$target.new"
    reference_missing "$*" "the download failed (above)" || return 0
  fi
  rm -f "$target.log"
  # Packages that Debian's Python already has and that must stay Debian's (numpy: the suite's torch
  # and the sluice package are built against it).
  for keep in ${SLUICE_FETCH_KEEP_SYSTEM:-}; do
    rm -rf "$target.new/$keep" "$target.new/$keep"-*.dist-info "$target.new/bin"
  done
  echo "$*" >"$target.new/.installed"
  rm -rf "$target"
  mv "$target.new" "$target"
  echo "fetch-python-test-deps: $* in $target"
}

fetch "$dir" safetensors==0.7.0
fetch "$(dirname "$dir")/keras" keras==3.15.1 "jax[cpu]==0.10.2"
fetch "$(dirname "$dir")/onnx" onnxruntime==1.32.0 onnx==1.23.2
SLUICE_FETCH_KEEP_SYSTEM=numpy fetch "$(dirname "$dir")/tensorflow" tensorflow-cpu==2.15.1
