#!/usr/bin/env bash
# Larger-than-RAM Parquet benchmark: Sluice's from_parquet reading a Parquet file bigger than this
# machine's memory, against pyarrow as users run it (iter_batches) and at its strongest (whole
# row groups), with dd's sequential read of the same file as the storage yardstick. Every tool
# runs in every run, one after the other, each on a cold file (evicted from the page cache
# first), for --seconds (new passes as needed), in its own process (peak RSS from GNU time);
# medians over --runs are printed as a markdown table, raw JSON lines kept in --out.
#
# usage: bench/parquet_bench.sh [--size 30G] [--data DIR] [--seconds 60] [--runs 3]
#                               [--threads N] [--only LIST] [--clean] [--out RESULTS.jsonl]
#   --size SIZE   how big big.parquet is written (powers of 1024: 30G, 300M); default 30G
#   --data DIR    where big.parquet is written once (pyarrow, 16 float32 columns + int64 label,
#                 row groups of 1,048,576 rows, snappy) and reused while its --size is the same
#                 (default: build/parquet-data)
#   --threads N   sluice's --threads, pyarrow's CPU and I/O thread pools (default: nproc)
#   --only LIST   comma-separated tools: sluice, pyarrow_iter_batches, pyarrow_row_groups, dd
#   --clean       delete the generated data at the end
#   --out FILE    default bench/results/parquet-<yyyymmdd>.jsonl
# env:   SLUICE         sluice binary (default: build/bin/sluice under the repo root)
#        SLUICE_PYTHON  python with numpy and pyarrow (default: the first of python3,
#                       /usr/bin/python3 that imports them)
# Tools: sluice (sluice run --profile: from_parquet, all 17 columns, num_parallel_calls AUTOTUNE
# → batch 1024), pyarrow_iter_batches (ParquetFile.iter_batches(batch_size=1024,
# use_threads=True), each batch's columns to numpy), pyarrow_row_groups (read_row_group(i,
# use_threads=True), its columns to numpy, cut into 1024-row views), dd (bs=8M to /dev/null).
# MB/s: the file's bytes per row times the rows delivered (dd: the bytes it read), 10^6 bytes.
# Needs GNU time (/usr/bin/time). Run as root to let it also drop the whole page cache (it
# still evicts the file without).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
me=parquet_bench.sh
command_line=$0
for arg in "$@"; do # as typed: quoted only where the shell needs it
    if [[ $arg =~ ^[A-Za-z0-9_./,=:+-]+$ ]]; then command_line+=" $arg"; else command_line+=" $(printf %q "$arg")"; fi
done

size=30G data=$root/build/parquet-data seconds=60 runs=3 threads=$(nproc) only="" clean=0
out=$root/bench/results/parquet-$(date +%Y%m%d).jsonl
batch=1024
while [[ $# -gt 0 ]]; do
    case $1 in
        -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
        --clean) clean=1; shift; continue ;;
    esac
    [[ $# -ge 2 ]] || { echo "$me: $1 needs a value" >&2; exit 2; }
    case $1 in
        --size) size=$2 ;;
        --data) data=$2 ;;
        --seconds) seconds=$2 ;;
        --runs) runs=$2 ;;
        --threads) threads=$2 ;;
        --only) only=$2 ;;
        --out) out=$2 ;;
        *) echo "$me: unknown option $1" >&2; exit 2 ;;
    esac
    shift 2
done
for v in seconds runs threads; do
    [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "$me: --$v must be a positive integer" >&2; exit 2; }
done
[[ $size =~ ^[1-9][0-9]*[KkMmGgTt]?$ ]] || { echo "$me: --size must be like 30G or 300M" >&2; exit 2; }

all_tools=(sluice pyarrow_iter_batches pyarrow_row_groups dd)
declare -A wanted=()
if [[ -z $only ]]; then
    for t in "${all_tools[@]}"; do wanted[$t]=1; done
else
    IFS=, read -ra picked <<< "$only"
    for t in "${picked[@]}"; do
        [[ " ${all_tools[*]} " == *" $t "* ]] || { echo "$me: --only: unknown tool '$t' (${all_tools[*]})" >&2; exit 2; }
        wanted[$t]=1
    done
fi
want() { [[ -n ${wanted[$1]:-} ]]; }

sluice=${SLUICE:-$root/build/bin/sluice}
[[ -x $sluice ]] || { echo "$me: no sluice binary at $sluice (build it or set SLUICE)" >&2; exit 1; }
if want sluice; then
    # (Captured first: grep closing the pipe early would fail the pipeline under pipefail.)
    ops=$("$sluice" ops --markdown)
    # shellcheck disable=SC2016 # the backquotes are Markdown's
    [[ $ops == *'### `from_parquet`'* ]] || { echo "$me: this sluice has no from_parquet op (rebuild it)" >&2; exit 1; }
fi
# GNU time, not the shell keyword: only it reports the peak RSS (%M).
[[ -x /usr/bin/time ]] || { echo "$me: needs GNU time at /usr/bin/time (Debian package 'time')" >&2; exit 1; }
first_python() {
    for cand in python3 /usr/bin/python3; do
        if command -v "$cand" >/dev/null && "$cand" -c "$1" 2>/dev/null; then echo "$cand"; return; fi
    done
}
py=${SLUICE_PYTHON:-$(first_python 'import numpy, pyarrow.parquet')}
[[ -n $py ]] || { echo "$me: no python that imports numpy and pyarrow (pip install pyarrow, or set SLUICE_PYTHON)" >&2; exit 1; }
"$py" -c 'import numpy, pyarrow.parquet' || { echo "$me: $py cannot import numpy and pyarrow" >&2; exit 1; }
helper=$here/parquet_bench_helper.py
evict_helper=$here/larger_than_ram_helper.py

# Data: written once (minutes at 30G) and reused while the stamp says it was written at this
# --size; one this script wrote at another --size is written again; one it did not write (no
# stamp) is used as it is.
file=$data/big.parquet stamp=$data/.big.parquet-gen
mkdir -p "$data"
gen_seconds=null
if [[ -f $file && $(cat "$stamp" 2>/dev/null) == "size=$size" ]]; then
    echo "$me: using $file ($(du -h "$file" | cut -f1), already generated at --size $size)" >&2
elif [[ -f $file && ! -f $stamp ]]; then
    echo "$me: using $file as it is ($(du -h "$file" | cut -f1)): not written by $me, --size is not applied" >&2
else
    rm -f "$stamp" "$file"
    # Refuse early rather than fill the disk: the file needs --size and a row group more.
    need_kib=$(( $("$py" -c 'import sys; sys.path.insert(0, sys.argv[1]); import parquet_bench_helper as h; print(h.parse_size(sys.argv[2]))' \
        "$here" "$size") / 1024 + 100 * 1024 ))
    free_kib=$(df -Pk "$data" | awk 'NR == 2 {print $4}')
    ((free_kib > need_kib)) || { echo "$me: $data has $((free_kib / 1024)) MiB free, --size $size needs $((need_kib / 1024))" >&2; exit 1; }
    echo "$me: writing $file ($size) with pyarrow" >&2
    gen=$("$py" "$helper" gen "$file" --size "$size")
    gen_seconds=$("$py" -c 'import json, sys; print(round(json.loads(sys.argv[1])["gen_seconds"], 1))' "${gen##*$'\n'}")
    echo "$me: generation took $gen_seconds s" >&2
    echo "size=$size" > "$stamp"
fi
ram_kib=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
if (($(stat -c %s "$file") / 1024 <= ram_kib)); then
    echo "$me: note: $file is not larger than RAM ($((ram_kib / 1024)) MiB): figures will not be disk-bound" >&2
fi

# The Sluice project, next to the data (its paths are relative to the project's folder).
project=$data/parquet-bench.sluice
columns='["f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9", "f10", "f11", "f12", "f13", "f14", "f15", "label"]'
cat > "$project" <<EOF
{
  "format": "sluice-project",
  "version": 1,
  "name": "parquet-bench",
  "description": "Written by bench/parquet_bench.sh.",
  "pipeline": {
    "nodes": [
      {"id": "source", "op": "from_parquet",
       "params": {"filenames": "big.parquet", "columns": $columns, "num_parallel_calls": "AUTOTUNE"}},
      {"id": "batch", "op": "batch", "params": {"batch_size": $batch}}
    ],
    "edges": [["source", "batch"]]
  }
}
EOF

tmp=$(mktemp -d)
cleanup() {
    rm -rf "$tmp"
    rm -f "$project"
    if [[ $clean == 1 ]]; then
        echo "$me: removing the generated data in $data" >&2
        rm -f "$file" "$stamp" "$file.partial"
        rmdir "$data" 2>/dev/null || true
    fi
}
trap cleanup EXIT

# Cold start for every tool: otherwise each would read what the previous one left cached.
# posix_fadvise (no privileges needed) evicts the file; drop_caches (root only) also drops the
# filesystem metadata. Prints the KiB of the file still cached (null without fincore).
evict() {
    sync
    { echo 3 > /proc/sys/vm/drop_caches; } 2>/dev/null || true
    "$py" "$evict_helper" evict "$file"
}

version=$("$sluice" --version | head -1)
pyarrow_version=$("$py" -c 'import pyarrow; print(pyarrow.__version__)')
mkdir -p "$(dirname "$out")"
"$py" "$helper" machine "$file" --batch "$batch" --threads "$threads" --seconds "$seconds" --runs "$runs" \
    --sluice-version "$version" --command "$command_line" > "$out"
# The header record also says how long generating the data took, when this run did it.
if [[ $gen_seconds != null ]]; then
    head_line=$(cat "$out")
    echo "${head_line%\}}, \"gen_seconds\": $gen_seconds}" > "$out"
fi

failed=0
load=$(cut -d' ' -f1-3 /proc/loadavg) # other work on the machine skews every figure: say how busy it was
# run_tool RUN TOOL THREADS COMMAND...: evict, run COMMAND under GNU time with its stdout kept
# in $tmp/raw; the caller turns that into the record.
run_tool() {
    local run=$1 tool=$2 nthreads=$3
    shift 3
    cached=$(evict)
    echo "run $run/$runs: $tool ($nthreads thread(s), ${seconds} s)" >&2
    /usr/bin/time -f "%e %M" -o "$tmp/time" "$@" > "$tmp/raw"
}
# add_record RECORD: append RECORD with the process's wall time, peak RSS and the cache before.
add_record() {
    local record=${1##*$'\n'} process_s rss_kib # the record is the last line
    read -r process_s rss_kib < <(tail -n 1 "$tmp/time")
    echo "${record%\}}, \"process_seconds\": $process_s, \"peak_rss_kib\": $rss_kib, \"cached_kib_before\": $cached}" >> "$out"
}
fail() { # TOOL WHAT
    echo "$me: FAILED: run $run: $1: $2" >&2
    failed=$((failed + 1))
}

for ((run = 1; run <= runs; run++)); do
    if want sluice; then
        if run_tool "$run" sluice "$threads" "$sluice" run "$project" --profile --seconds "$seconds" --json --threads "$threads" &&
            record=$("$py" "$helper" sluice-record "$tmp/raw" --file "$file" --threads "$threads" --run "$run" --batch "$batch"); then
            add_record "$record"
        else
            fail sluice "$(grep -h '"run_end"' "$tmp/raw" | tail -c 600)"
        fi
    fi
    for tool in pyarrow_iter_batches pyarrow_row_groups; do
        want $tool || continue
        if run_tool "$run" $tool "$threads" "$py" "$helper" peer $tool "$file" --threads "$threads" --seconds "$seconds" \
                --batch "$batch" --run "$run"; then
            add_record "$(cat "$tmp/raw")"
        else
            fail $tool "$(tail -n 3 "$tmp/raw")"
        fi
    done
    if want dd; then
        if run_tool "$run" dd 1 "$py" "$helper" dd "$file" --threads 1 --seconds "$seconds" --bs 8M --run "$run"; then
            add_record "$(cat "$tmp/raw")"
        else
            fail dd "$(tail -n 3 "$tmp/raw")"
        fi
    fi
done

echo "results: $out" >&2
mem_gib=$(awk '/^MemTotal:/ {printf "%.1f", $2 / 1048576}' /proc/meminfo)
disk_free=$(df -Ph "$data" | awk 'NR == 2 {print $4 " free of " $2}')
echo "machine: nproc $(nproc), RAM $mem_gib GiB, disk ($data) $disk_free"
echo "sluice: $version"
echo "pyarrow: $pyarrow_version ($py)"
echo "command: $command_line"
echo "threads: sluice --threads $threads, pyarrow cpu/io threads $threads, dd 1"
echo "load average before the runs: $load, after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
"$py" "$helper" summarize "$out"
[[ $failed == 0 ]] || { echo "$me: $failed tool run(s) failed (see above)" >&2; exit 1; }
