#!/usr/bin/env bash
# Larger-than-RAM benchmark: shuffled batches from a .npy bigger than this machine's memory,
# Sluice against what users would otherwise run, with the disk's own random-read limit (fio)
# as the yardstick, and a sequential pass for peak memory. Every tool runs in every run, one
# after the other, each on a cold file (evicted from the page cache first), for --seconds;
# medians over --runs are printed as a markdown table, raw JSON lines kept in --out.
#
# usage: bench/larger_than_ram.sh [--size 30G] [--data DIR] [--seconds 30] [--runs 3]
#                                 [--batch 1024] [--threads N] [--only LIST] [--keep]
#                                 [--out RESULTS.jsonl]
#   --data DIR    where x.npy and y.npy are: written with `sluice gen` when missing, and then
#                 removed after a complete run unless --keep; files found there are kept
#   --threads N   sluice's threads, the numpy peers' threads, DataLoader workers (default: nproc)
#   --only LIST   comma-separated tools to run: sluice_pipeline, sluice_read, numpy,
#                 numpy_random, torch_batched, fio, sluice_storage, sluice_pipeline_seq, sluice_read_seq
#   --out FILE    default bench/results/larger-than-ram-<yyyymmdd>.jsonl
# env:   SLUICE         sluice binary (default: build/bin/sluice under the repo root)
#        SLUICE_PYTHON  python with numpy and torch (default: the first of python3,
#                       /usr/bin/python3 that imports them)
# Needs GNU time (/usr/bin/time) and fio: scripts/setup-debian.sh installs both. Run as root
# to let it also drop the whole page cache (it still evicts the files without).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
me=larger_than_ram.sh

size=30G data=$root/build/big-data seconds=30 runs=3 batch=1024 threads=$(nproc) keep=0
only="" out=$root/bench/results/larger-than-ram-$(date +%Y%m%d).jsonl
while [[ $# -gt 0 ]]; do
    case $1 in
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        --keep) keep=1; shift; continue ;;
    esac
    [[ $# -ge 2 ]] || { echo "$me: $1 needs a value" >&2; exit 2; }
    case $1 in
        --size) size=$2 ;;
        --data) data=$2 ;;
        --seconds) seconds=$2 ;;
        --runs) runs=$2 ;;
        --batch) batch=$2 ;;
        --threads) threads=$2 ;;
        --only) only=$2 ;;
        --out) out=$2 ;;
        *) echo "$me: unknown option $1" >&2; exit 2 ;;
    esac
    shift 2
done
# Whole seconds: fio's --runtime takes no fractions.
for v in seconds runs batch threads; do
    [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "$me: --$v must be a positive integer" >&2; exit 2; }
done

# The tools, in the order each run goes through them.
all_tools=(sluice_pipeline sluice_read numpy numpy_random torch_batched fio sluice_storage sluice_pipeline_seq sluice_read_seq)
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
# GNU time, not the shell keyword: only it reports the peak RSS (%M).
[[ -x /usr/bin/time ]] || { echo "$me: needs GNU time at /usr/bin/time (Debian package 'time')" >&2; exit 1; }
if want fio; then
    command -v fio >/dev/null || { echo "$me: needs fio (Debian package 'fio'), or leave it out with --only" >&2; exit 1; }
fi
# Debian's python3 has numpy and torch; a pyenv python3 first on PATH may have neither.
first_python() {
    for cand in python3 /usr/bin/python3; do
        if command -v "$cand" >/dev/null && "$cand" -c "$1" 2>/dev/null; then echo "$cand"; return; fi
    done
}
py_needs='import numpy'
want torch_batched && py_needs='import numpy, torch'
py=${SLUICE_PYTHON:-$(first_python "$py_needs")}
[[ -n $py ]] || { echo "$me: no python that can '$py_needs' (set SLUICE_PYTHON, or leave torch_batched out with --only)" >&2; exit 1; }
export SLUICE_PYTHON=$py  # so the peers do not go looking again
helper=$here/larger_than_ram_helper.py

# Data: generated only when missing, because writing 30 GB takes minutes; a file already
# there is used as it is (whatever --size says) and never removed.
x=$data/x.npy y=$data/y.npy
generated=0
if [[ -f $x && -f $y ]]; then
    echo "$me: using $x as it is ($(du -h "$x" | cut -f1)); --size is not applied" >&2
else
    echo "$me: writing $size into $data with sluice gen" >&2
    /usr/bin/time -f "$me: gen took %e s" "$sluice" gen regression --out "$data" --size "$size" \
        --feature x:256 --target y:1 >&2
    generated=1
fi
ram_kib=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
if (($(stat -c %s "$x") / 1024 <= ram_kib)); then
    echo "$me: note: $x is not larger than RAM ($((ram_kib / 1024)) MiB): figures will not be disk-bound" >&2
fi

# The pipelines, next to the data so that their paths are relative to the project's folder.
# Shuffled: the classic pipeline (fresh permutation per pass, gather fused with batch).
# Sequential: the same without the shuffle, for the peak memory of one streaming pass.
write_project() { # FILE NAME SHUFFLE(0|1)
    local shuffle_node='' batch_from=arrays edges=''
    if [[ $3 == 1 ]]; then
        shuffle_node='{"id": "shuffle", "op": "global_shuffle", "params": {"seed": 1}},'
        batch_from=shuffle edges='["arrays", "shuffle"], '
    fi
    cat > "$1" <<EOF
{
  "format": "sluice-project",
  "version": 1,
  "name": "$2",
  "description": "Written by bench/larger_than_ram.sh.",
  "pipeline": {
    "nodes": [
      {"id": "arrays", "op": "from_npy", "params": {"features": {"x": "x.npy", "y": "y.npy"}}},
      $shuffle_node
      {"id": "batch", "op": "batch", "params": {"batch_size": $batch}},
      {"id": "prefetch", "op": "prefetch", "params": {"buffer_size": "AUTOTUNE"}}
    ],
    "edges": [${edges}["$batch_from", "batch"], ["batch", "prefetch"]]
  },
  "layout": {}
}
EOF
}
p_shuffled=$data/larger-than-ram-shuffled.sluice p_sequential=$data/larger-than-ram-sequential.sluice
write_project "$p_shuffled" larger-than-ram-shuffled 1
write_project "$p_sequential" larger-than-ram-sequential 0

tmp=$(mktemp -d)
finished=0
cleanup() {
    rm -rf "$tmp"
    rm -f "$p_shuffled" "$p_sequential"
    [[ $generated == 1 && $keep == 0 ]] || return 0
    if [[ $finished == 1 ]]; then
        # Only what sluice gen wrote: --data may name a folder that holds other things.
        rm -f "$x" "$y"
        rmdir "$data" 2>/dev/null || true
    else  # a failed or interrupted run: spare the next attempt the minutes of writing it again
        echo "$me: kept $data for the next attempt; remove it when done" >&2
    fi
}
trap cleanup EXIT

# Cold start for every tool: otherwise each would read what the previous one left cached.
# posix_fadvise needs no privileges but spares pages someone maps (nobody does between
# tools); drop_caches (root only) also drops the filesystem metadata.
evict() {
    sync
    { echo 3 > /proc/sys/vm/drop_caches; } 2>/dev/null || true
    "$py" "$helper" evict "$x" "$y" # prints KiB of x.npy still cached, kept in each record
}

# run_tool RUN TOOL KIND THREADS WHAT COMMAND...: evict, run COMMAND under GNU time with
# its stdout kept, and append the tool's record to $out (WHAT is for the progress line).
run_tool() {
    local run=$1 tool=$2 kind=$3 nthreads=$4 what=$5 cached rc=0
    shift 5
    cached=$(evict)
    echo "run $run/$runs: $tool, $what" >&2
    /usr/bin/time -f %M -o "$tmp/rss" "$@" > "$tmp/raw" || rc=$?
    if ((rc != 0)); then
        echo "$me: $tool failed (exit $rc): $*" >&2
        tail -n 5 "$tmp/raw" >&2
        exit 1
    fi
    "$py" "$helper" record --kind "$kind" --tool "$tool" --run "$run" --batch "$batch" --threads "$nthreads" \
        --npy "$x" --rss-file "$tmp/rss" --cached-kib "$cached" < "$tmp/raw" >> "$out"
}

# 1 and T threads for the numpy peers (one if T is 1); 0 (in-process) and T DataLoader workers.
py_threads=(1); ((threads > 1)) && py_threads+=("$threads")
fio_args=(--name=randread --filename="$x" --readonly --direct=1 --ioengine=libaio --rw=randread --bs=4k
          --time_based --runtime="$seconds" --output-format=json)

mkdir -p "$(dirname "$out")"
"$py" "$helper" machine "$x" --batch "$batch" --threads "$threads" --seconds "$seconds" --runs "$runs" > "$out"
for ((run = 1; run <= runs; run++)); do
    if want sluice_pipeline; then
        run_tool "$run" sluice_pipeline sluice_run "$threads" "$threads threads" \
            "$sluice" run "$p_shuffled" --profile --seconds "$seconds" --json --threads "$threads"
    fi
    if want sluice_read; then
        run_tool "$run" sluice_read sluice_read "$threads" "$threads threads" \
            "$sluice" bench read "$x" --order shuffled --batch "$batch" --threads "$threads" --seconds "$seconds" --json
    fi
    for tool in numpy numpy_random; do
        want $tool || continue
        for n in "${py_threads[@]}"; do
            run_tool "$run" $tool peer "$n" "$n thread(s)" \
                "$py" "$here/peers/larger_than_ram_peers.py" "$x" --tool $tool --threads "$n" --batch "$batch" \
                --seconds "$seconds" --json
        done
    done
    if want torch_batched; then
        for w in 0 "$threads"; do
            run_tool "$run" torch_batched peer "$w" "num_workers=$w" \
                "$py" "$here/peers/larger_than_ram_peers.py" "$x" --tool torch_batched --threads "$w" --batch "$batch" \
                --seconds "$seconds" --json
        done
    fi
    if want fio; then
        # QD64: where the disk stops gaining; QD32: the yardstick of the goals; QD1: one
        # synchronous read at a time.
        for qd in 64 32 1; do
            run_tool "$run" fio fio 1 "queue depth $qd" fio "${fio_args[@]}" --iodepth=$qd
        done
    fi
    if want sluice_storage; then
        # Sluice's own measure of the same limit (what profiles compare with): it should agree with fio.
        for qd in 64 32 1; do
            run_tool "$run" sluice_storage sluice_storage 1 "queue depth $qd" \
                "$sluice" bench storage "$x" --seconds "$seconds" --queue-depth $qd --no-save --json
        done
    fi
    if want sluice_pipeline_seq; then
        run_tool "$run" sluice_pipeline_seq sluice_run "$threads" "$threads threads, one pass" \
            "$sluice" run "$p_sequential" --profile --epochs 1 --json --threads "$threads"
    fi
    if want sluice_read_seq; then
        run_tool "$run" sluice_read_seq sluice_read "$threads" "$threads threads, one pass" \
            "$sluice" bench read "$x" --order sequential --batch "$batch" --passes 1 --threads "$threads" --json
    fi
done

echo "results: $out" >&2
"$py" "$here/summarize_larger_than_ram.py" "$out"
finished=1
