#!/usr/bin/env bash
# Installs every Debian package Sluice needs to build, run, test and benchmark.
# Safe to run repeatedly: it only calls apt-get when something is missing.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build pkg-config clang libclang-rt-14-dev
  # core
  libtbb-dev nlohmann-json3-dev zlib1g-dev libjpeg62-turbo-dev libpng-dev libopenblas-dev libopenmpi-dev openmpi-bin
  # Keras model files (sluice import): their weights are HDF5
  libhdf5-dev
  # ONNX export: ONNX's schema compiled for protobuf; onnx's checker for the tests
  libonnx-dev libprotobuf-dev python3-onnx
  # the Python package (import sluice) and its pytest suite
  python3-dev pybind11-dev python3-pytest
  # GUI
  qt6-base-dev qt6-base-dev-tools qt6-svg-dev libqcustomplot-dev libgl-dev
  # tests and benchmarks: an X server for GUI tests, numpy to write reference files,
  # numpy and PyTorch as the peers the benchmarks compare with
  xvfb xauth python3 python3-numpy python3-torch
  # for bench/larger_than_ram.sh: fio measures the disk's random-read limit that the
  # shuffled readers are held to, GNU time (/usr/bin/time) the peak RSS of every tool
  fio time
  # packaging: PNG icons from the SVG, run paths of the relocatable bundle, the .deb's
  # dependencies (dpkg-shlibdeps) and the desktop entry check
  librsvg2-bin patchelf dpkg-dev file desktop-file-utils
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "sluice setup: installing ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
