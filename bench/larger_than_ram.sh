#!/usr/bin/env bash
# Larger-than-RAM check: writes a .npy bigger than this machine's memory with `sluice gen`,
# then makes one full sequential pass and a timed shuffled run with `sluice bench read`,
# reporting the peak resident memory the kernel saw (GNU time) next to the file size.
#
# usage: bench/larger_than_ram.sh [--size 40G] [--data DIR] [--shuffled-seconds 60] [--keep]
# Needs free disk for the file; removes it at the end unless --keep.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
size=40G data=$root/build/big-data shuffled_seconds=60 keep=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --size) size=$2; shift 2 ;;
    --data) data=$2; shift 2 ;;
    --shuffled-seconds) shuffled_seconds=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "larger_than_ram.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
sluice=${SLUICE:-$root/build/bin/sluice}
[[ -x /usr/bin/time ]] || { echo "larger_than_ram.sh: needs GNU time (Debian package 'time')" >&2; exit 1; }

echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB RAM"
if [[ ! -f $data/x.npy ]]; then
  /usr/bin/time -f "gen: %e s, peak RSS %M KiB" "$sluice" gen regression --out "$data" --size "$size" --feature x:256 --target y:1
fi
ls -l "$data/x.npy"
# Start cold where the kernel lets us, so the pass really streams from disk.
sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true

/usr/bin/time -f "sequential pass: %e s, peak RSS %M KiB (GNU time)" \
  "$sluice" bench read "$data/x.npy" --order sequential --passes 1 --threads 2 --json
/usr/bin/time -f "shuffled ${shuffled_seconds}s: %e s, peak RSS %M KiB (GNU time)" \
  "$sluice" bench read "$data/x.npy" --order shuffled --seconds "$shuffled_seconds" --threads 2 --json
[[ $keep == 1 ]] || rm -rf "$data"
