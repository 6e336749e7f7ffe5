#!/usr/bin/env bash
# Python packages the test suite uses as independent references that Debian does not package,
# installed from PyPI for Debian's Python 3.11, never into the system's Python:
#   .deps/python  safetensors (Hugging Face's reader checks the files `sluice export` writes), on
#                 the pytest suite's PYTHONPATH;
#   .deps/keras   Keras 3 with its JAX backend (CPU), which loads the .keras archives `sluice export`
#                 writes; only the subprocesses that run Keras see it (it brings its own numpy);
#   .deps/onnx    onnxruntime, which runs the ONNX graphs `sluice export` writes, likewise.
# Without pip or PyPI it says so and exits 0: the tests then skip those checks.
# Usage: scripts/fetch-python-test-deps.sh [DIR] (default .deps/python; Keras goes beside it)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
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
    echo "fetch-python-test-deps: no pip found; $* left out (the tests skip those checks)" >&2
    return 0
  fi
  mkdir -p "$(dirname "$target")"
  rm -rf "$target.new"
  # Wheels for CPython 3.11 on Linux (Debian 12's Python, which the suite runs), whatever runs pip.
  if ! "${pip[@]}" install --quiet --disable-pip-version-check --only-binary :all: --python-version 3.11 \
       --platform manylinux_2_17_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_28_x86_64 \
       --platform manylinux2014_x86_64 --target "$target.new" "$@" >"$target.log" 2>&1; then
    cat "$target.log" >&2
    echo "fetch-python-test-deps: the download failed; $* left out (the tests skip those checks)" >&2
    rm -rf "$target.new"
    return 0
  fi
  rm -f "$target.log"
  echo "$*" >"$target.new/.installed"
  rm -rf "$target"
  mv "$target.new" "$target"
  echo "fetch-python-test-deps: $* in $target"
}

fetch "$dir" safetensors==0.7.0
fetch "$(dirname "$dir")/keras" keras==3.15.1 "jax[cpu]==0.10.2"
fetch "$(dirname "$dir")/onnx" onnxruntime==1.32.0
