#!/usr/bin/env bash
# Python packages the test suite uses as independent references that Debian does not package:
# `safetensors` (Hugging Face's reader checks the files `sluice export` writes). Installed from
# PyPI into .deps/python (on the pytest suite's PYTHONPATH), never into the system's Python.
# Without pip or PyPI it says so and exits 0: the tests then check with their own readers only.
# Usage: scripts/fetch-python-test-deps.sh [DIR] (default .deps/python)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${1:-$root/.deps/python}"
wanted=(safetensors==0.7.0)
stamp="$dir/.installed"
[[ -f $stamp && "$(cat "$stamp")" == "${wanted[*]}" ]] && exit 0

pip=()
for python in python3 /usr/bin/python3; do
  if command -v "$python" >/dev/null && "$python" -m pip --version >/dev/null 2>&1; then
    pip=("$python" -m pip)
    break
  fi
done
if ((${#pip[@]} == 0)); then
  echo "fetch-python-test-deps: no pip found; ${wanted[*]} left out (the tests skip those checks)" >&2
  exit 0
fi
mkdir -p "$(dirname "$dir")"
rm -rf "$dir.new"
# Wheels for CPython 3.11 on Linux (Debian 12's Python, which the suite runs), whatever runs pip.
if ! "${pip[@]}" install --quiet --disable-pip-version-check --no-deps --only-binary :all: --python-version 3.11 \
     --platform manylinux_2_17_x86_64 --target "$dir.new" "${wanted[@]}" >"$dir.log" 2>&1; then
  cat "$dir.log" >&2
  echo "fetch-python-test-deps: the download failed; ${wanted[*]} left out (the tests skip those checks)" >&2
  rm -rf "$dir.new"
  exit 0
fi
rm -f "$dir.log"
echo "${wanted[*]}" >"$dir.new/.installed"
rm -rf "$dir"
mv "$dir.new" "$dir"
echo "fetch-python-test-deps: ${wanted[*]} in $dir"
