#!/usr/bin/env bash
# Fetches Apache Arrow's C++ libraries and headers (libarrow, libparquet) for from_parquet.
# Debian 12 does not package Arrow; the pyarrow wheel on PyPI carries the same C++ libraries,
# built for manylinux_2_28 (glibc 2.28, the C++11 ABI), with their headers. Only those are
# taken from it: nothing of Python's. Usage: scripts/fetch-arrow.sh [DIR] (default .deps/arrow).
# Without pip or PyPI it says so: under CI=true it fails (from_parquet's tests need Arrow),
# elsewhere it exits 0 and the build leaves Parquet out.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/lib/reference.sh"
version=25.0.1
soversion=2500
dir="${1:-$root/.deps/arrow}"

if [[ -f "$dir/VERSION" && "$(cat "$dir/VERSION")" == "$version" ]]; then
  exit 0
fi
case "$(uname -m)" in
  x86_64) platform=manylinux_2_28_x86_64 ;;
  aarch64) platform=manylinux_2_28_aarch64 ;;
  *) reference_missing "Apache Arrow" "no Arrow wheel for $(uname -m), Parquet support is left out" || exit 0 ;;
esac
pip=()
for python in python3 /usr/bin/python3; do
  if command -v "$python" >/dev/null && "$python" -m pip --version >/dev/null 2>&1; then
    pip=("$python" -m pip)
    break
  fi
done
if ((${#pip[@]} == 0)); then
  reference_missing "Apache Arrow" "no pip found, Parquet support is left out" || exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "fetch-arrow: Apache Arrow $version (libarrow, libparquet) from the pyarrow wheel"
# The libraries do not depend on the Python version; one wheel is named to pin the download.
if ! "${pip[@]}" download --quiet --no-deps --only-binary :all: --platform "$platform" --python-version 3.11 \
     --implementation cp --abi cp311 "pyarrow==$version" -d "$work" >"$work/pip.log" 2>&1; then
  cat "$work/pip.log" >&2
  reference_missing "Apache Arrow $version" "the download failed, Parquet support is left out" || exit 0
fi
wheel=("$work"/pyarrow-*.whl)
"${pip[0]}" - "${wheel[0]}" "$work/x" "$soversion" <<'PY'
import sys, zipfile
wheel, out, so = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    wanted = [n for n in z.namelist()
              if n in (f"pyarrow/libarrow.so.{so}", f"pyarrow/libparquet.so.{so}")
              or n.startswith(("pyarrow/include/arrow/", "pyarrow/include/parquet/"))]
    z.extractall(out, wanted)
PY
rm -rf "$dir.new"
mkdir -p "$dir.new/lib"
mv "$work/x/pyarrow/include" "$dir.new/include"
for lib in arrow parquet; do
  mv "$work/x/pyarrow/lib$lib.so.$soversion" "$dir.new/lib/"
  ln -s "lib$lib.so.$soversion" "$dir.new/lib/lib$lib.so"
done
echo "$version" >"$dir.new/VERSION"
rm -rf "$dir"
mv "$dir.new" "$dir"
echo "fetch-arrow: in $dir"
