#!/usr/bin/env bash
# A picture folder larger than this machine's RAM for bench/image_bench.sh --cold: `sluice gen
# images` writes DISTINCT pictures (5 class folders), then each is copied under other names
# until the folder holds COPIES times as many files. The copies are separate files on disk, so
# the page cache shares nothing between them; drawing and encoding a million pictures would
# take over an hour on 2 cores, copying them a few minutes.
#
# usage: bench/big_image_set.sh BUILD_DIR OUT_DIR [--distinct 20000] [--copies 50] [--source 256x256]
set -euo pipefail
[[ $# -ge 2 ]] || { sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
build=$(cd "$1" && pwd) out=$2
shift 2
distinct=20000 copies=50 source=256x256
while [[ $# -gt 0 ]]; do
    [[ $# -ge 2 ]] || { echo "big_image_set.sh: $1 needs a value" >&2; exit 2; }
    case $1 in
        --distinct) distinct=$2 ;;
        --copies) copies=$2 ;;
        --source) source=$2 ;;
        *) echo "big_image_set.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift 2
done
[[ -f $out/.complete ]] && { echo "$out is complete already" >&2; exit 0; }
rm -rf "$out"
"$build/bin/sluice" gen images --out "$out" --rows "$distinct" --classes 5 --size "$source" --format jpeg --seed 1 >/dev/null
# One Python process for all copies: a cp per file would spend longer starting than copying.
/usr/bin/python3 - "$out" "$copies" <<'PY'
import glob, os, shutil, sys
out, copies = sys.argv[1], int(sys.argv[2])
for folder in sorted(glob.glob(os.path.join(out, "*", ""))):
    originals = sorted(glob.glob(os.path.join(folder, "*.jpg")))
    for k in range(1, copies):
        for f in originals:
            shutil.copyfile(f, os.path.join(folder, f"copy{k}-" + os.path.basename(f)))
PY
touch "$out/.complete"
du -sh "$out"
