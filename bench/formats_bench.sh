#!/usr/bin/env bash
# Formats benchmark: Sluice parsing CSV and TFRecord (plain and GZIP) against the peers at their
# strongest (numpy.loadtxt, pandas C and pyarrow engines, pyarrow.csv, polars, tf.data's
# CsvDataset and batched decode_csv; for TFRecord tf.data's TFRecordDataset, sequential and in a
# parallel interleave, + batched parse_example). Each tool makes one full pass per run, in its own process (peak RSS from
# /usr/bin/time), every tool in every run, data pre-warmed in the page cache before each tool
# (this measures parsing, not the disk). Prints medians; raw JSON lines go to --out.
#
# usage: bench/formats_bench.sh [--runs 3] [--threads T] [--only LIST] [--csv-rows 5000000]
#            [--tfrecord-rows 2000000] [--tfrecord-files 8] [--data DIR] [--clean] [--out FILE]
#   --threads   the CPU budget of the parallel tools (default: nproc)
#   --only      comma-separated tools, formats (csv, tfrecord, tfrecord_gzip) or format/tool
#               pairs to run, e.g. --only csv or --only sluice_autotune,pandas_pyarrow
#   --data      where the data is written once and reused (default: build/formats-data)
#   --clean     delete the generated data at the end
#   --out       raw JSON lines (default: bench/results/formats-<yyyymmdd>.jsonl)
# env:   SLUICE           sluice binary (default: build/bin/sluice under the repo root)
#        SLUICE_TF_PYTHON python with numpy, tensorflow (and pandas, pyarrow, polars) for the data
#                         and the peers (default: the virtual environment build/tf-venv, created
#                         with `pip install tensorflow-cpu numpy pandas pyarrow polars` if needed)
#
# Tools: csv: sluice_one_thread (from_csv num_parallel_calls 1, --threads 1), sluice_autotune
# (num_parallel_calls AUTOTUNE, --threads T), numpy_loadtxt, pandas_c, pandas_pyarrow,
# pyarrow_csv, polars, tfdata_csvdataset, tfdata_decode_csv. tfrecord and tfrecord_gzip:
# sluice_no_interleave, sluice_interleave (cycle_length T, no num_parallel_calls),
# sluice_interleave_autotune (num_parallel_calls AUTOTUNE), sluice_interleave_one_thread (the same
# on --threads 1), tfdata_sequential (no interleave),
# tfdata_interleave.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)

runs=3 threads=$(nproc) only="" csv_rows=5000000 tfrecord_rows=2000000 tfrecord_files=8 clean=0
data=$root/build/formats-data
out=$root/bench/results/formats-$(date +%Y%m%d).jsonl
while [[ $# -gt 0 ]]; do
    case $1 in
        --clean) clean=1; shift; continue ;;
        -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
    esac
    [[ $# -ge 2 ]] || { echo "formats_bench.sh: $1 needs a value" >&2; exit 2; }
    case $1 in
        --runs) runs=$2 ;;
        --threads) threads=$2 ;;
        --only) only=$2 ;;
        --csv-rows) csv_rows=$2 ;;
        --tfrecord-rows) tfrecord_rows=$2 ;;
        --tfrecord-files) tfrecord_files=$2 ;;
        --data) data=$2 ;;
        --out) out=$2 ;;
        *) echo "formats_bench.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift 2
done
for n in runs threads csv_rows tfrecord_rows tfrecord_files; do
    [[ ${!n} =~ ^[1-9][0-9]*$ ]] || { echo "formats_bench.sh: --${n//_/-} must be a positive integer" >&2; exit 2; }
done

sluice=${SLUICE:-$root/build/bin/sluice}
[[ -x $sluice ]] || { echo "formats_bench.sh: no sluice binary at $sluice (build it or set SLUICE)" >&2; exit 1; }
# (Captured first: grep -q closing the pipe early would fail the pipeline under pipefail.)
ops=$("$sluice" ops --markdown)
# shellcheck disable=SC2016 # the backquotes are Markdown's
from_csv_params=$(sed -n '/^### `from_csv`/,/^##/p' <<< "$ops")
if [[ $from_csv_params != *num_parallel_calls* ]]; then
    echo "formats_bench.sh: this sluice's from_csv has no num_parallel_calls (rebuild it)" >&2
    exit 1
fi

# /usr/bin/time, not the shell keyword: the peak RSS (%M) of each tool's process.
if [[ ! -x /usr/bin/time ]]; then
    echo "formats_bench.sh: installing Debian's time for /usr/bin/time" >&2
    apt-get install -y time >&2 || { echo "formats_bench.sh: apt-get install time failed (run as root)" >&2; exit 1; }
fi

# One interpreter for the data and every Python peer: TensorFlow writes the TFRecords (the
# format as TensorFlow itself writes it), so a python with tensorflow is needed anyway. A venv
# of its own (no --system-site-packages) keeps Debian's numpy/torch and the venv's versions apart.
venv=$root/build/tf-venv
if [[ -n ${SLUICE_TF_PYTHON:-} ]]; then
    py=$SLUICE_TF_PYTHON
else
    py=$venv/bin/python
    if ! { [[ -x $py ]] && "$py" -c 'import numpy, tensorflow' 2>/dev/null; }; then
        base=""
        for cand in python3 /usr/bin/python3; do
            if command -v "$cand" >/dev/null && "$cand" -c 'import venv, ensurepip' 2>/dev/null; then base=$cand; break; fi
        done
        [[ -n $base ]] || { echo "formats_bench.sh: no python3 with venv (apt-get install python3-venv)" >&2; exit 1; }
        echo "formats_bench.sh: creating $venv with tensorflow-cpu (a few minutes, once)" >&2
        [[ -x $py ]] || "$base" -m venv "$venv"
        "$py" -m pip install --quiet --upgrade pip >&2
        "$py" -m pip install --quiet tensorflow-cpu numpy >&2
    fi
    # The CSV peers; optional each (a peer that cannot be installed is left out and said so).
    for pkg in pandas pyarrow polars; do
        "$py" -c "import $pkg" 2>/dev/null || "$py" -m pip install --quiet "$pkg" >&2 ||
            echo "formats_bench.sh: pip install $pkg failed; its peers are skipped" >&2
    done
fi
"$py" -c 'import numpy, tensorflow' 2>/dev/null ||
    { echo "formats_bench.sh: $py cannot import numpy and tensorflow" >&2; exit 1; }
peers=$here/peers/formats_peers.py

# Data, written once and reused while the stamp says it was made with the same sizes.
mkdir -p "$data"
if [[ -f $data/rows.csv && $(cat "$data/.csv-gen" 2>/dev/null) == "rows=$csv_rows" ]]; then
    echo "using $data/rows.csv (already generated)" >&2
else
    rm -f "$data/.csv-gen"
    "$py" "$peers" gen-csv "$data" --rows "$csv_rows"
    echo "rows=$csv_rows" > "$data/.csv-gen"
fi
if [[ -d $data/plain && -d $data/gzip && $(cat "$data/.tfrecord-gen" 2>/dev/null) == "rows=$tfrecord_rows files=$tfrecord_files" ]]; then
    echo "using $data/plain and $data/gzip (already generated)" >&2
else
    rm -f "$data/.tfrecord-gen"
    "$py" "$peers" gen-tfrecord "$data" --rows "$tfrecord_rows" --files "$tfrecord_files"
    echo "rows=$tfrecord_rows files=$tfrecord_files" > "$data/.tfrecord-gen"
fi

# The Sluice projects, next to the data (their paths are relative to the project's folder).
# One pipeline per tool, as a user would write it: source → [interleave] → batch 1024 → prefetch.
project() { # NAME SOURCE_OP SOURCE_PARAMS [INTERLEAVE_PARAMS]
    local nodes edges
    nodes="{\"id\": \"source\", \"op\": \"$2\", \"params\": $3}"
    edges='["source", "'
    if [[ -n ${4:-} ]]; then
        nodes+=", {\"id\": \"interleave\", \"op\": \"interleave\", \"params\": $4}"
        edges+='interleave"], ["interleave", "'
    fi
    nodes+=', {"id": "batch", "op": "batch", "params": {"batch_size": 1024}}'
    nodes+=', {"id": "prefetch", "op": "prefetch", "params": {"buffer_size": "AUTOTUNE"}}'
    edges+='batch"], ["batch", "prefetch"]'
    printf '{"format": "sluice-project", "version": 1, "name": "%s",\n "pipeline": {"nodes": [%s],\n  "edges": [%s]}}\n' \
        "$1" "$nodes" "$edges" > "$data/$1.sluice"
}
columns='{"f0": "float32", "f1": "float32", "f2": "float32", "f3": "float32", "f4": "float32", "f5": "float32",
          "f6": "float32", "f7": "float32", "f8": "float32", "f9": "float32", "label": "int64"}'
features='{"x": {"dtype": "float32", "shape": [32]}, "y": {"dtype": "int64", "shape": []}}'
project csv.sluice_one_thread from_csv "{\"filenames\": \"rows.csv\", \"columns\": $columns, \"num_parallel_calls\": 1}"
project csv.sluice_autotune from_csv "{\"filenames\": \"rows.csv\", \"columns\": $columns, \"num_parallel_calls\": \"AUTOTUNE\"}"
for fmt in tfrecord tfrecord_gzip; do
    if [[ $fmt == tfrecord ]]; then src="{\"filenames\": \"plain/*.tfrecord\", \"features\": $features}"
    else src="{\"filenames\": \"gzip/*.tfrecord.gz\", \"compression_type\": \"GZIP\", \"features\": $features}"; fi
    project "$fmt.sluice_no_interleave" from_tfrecord "$src"
    project "$fmt.sluice_interleave" from_tfrecord "$src" "{\"cycle_length\": $threads}"
    project "$fmt.sluice_interleave_autotune" from_tfrecord "$src" "{\"cycle_length\": $threads, \"num_parallel_calls\": \"AUTOTUNE\"}"
    # The same pipeline on one thread: what the parallel decoding is measured against.
    cp "$data/$fmt.sluice_interleave_autotune.sluice" "$data/$fmt.sluice_interleave_one_thread.sluice"
done

# The jobs, "format tool threads": each run makes one pass of every job, in this order.
jobs=(
    "csv sluice_one_thread 1" "csv sluice_autotune $threads"
    "csv numpy_loadtxt 1" "csv pandas_c 1" "csv pandas_pyarrow $threads" "csv pyarrow_csv $threads"
    "csv polars $threads" "csv tfdata_csvdataset $threads" "csv tfdata_decode_csv $threads"
)
for fmt in tfrecord tfrecord_gzip; do
    jobs+=("$fmt sluice_interleave_one_thread 1" "$fmt sluice_no_interleave $threads" "$fmt sluice_interleave $threads"
           "$fmt sluice_interleave_autotune $threads" "$fmt tfdata_sequential $threads" "$fmt tfdata_interleave $threads")
done
selected() { # FORMAT TOOL: in --only (everything without it)?
    [[ -z $only ]] && return 0
    local item
    for item in ${only//,/ }; do
        [[ $item == "$1" || $item == "$2" || $item == "$1/$2" ]] && return 0
    done
    return 1
}
# Optional peers whose module is missing are left out up front (and said so), not failed per run.
declare -A peer_module=([pandas_c]=pandas [pandas_pyarrow]="pandas, pyarrow" [pyarrow_csv]=pyarrow [polars]=polars)
todo=()
for job in "${jobs[@]}"; do
    read -r fmt tool _ <<< "$job"
    selected "$fmt" "$tool" || continue
    if [[ -n ${peer_module[$tool]:-} ]] && ! "$py" -c "import ${peer_module[$tool]}" 2>/dev/null; then
        echo "formats_bench.sh: $tool skipped: $py cannot import ${peer_module[$tool]}" >&2
        continue
    fi
    todo+=("$job")
done
[[ ${#todo[@]} -gt 0 ]] || { echo "formats_bench.sh: --only $only selects nothing" >&2; exit 2; }

warm() { # FORMAT: read the files a tool of this format reads into the page cache
    case $1 in
        csv) cat "$data/rows.csv" ;;
        tfrecord) cat "$data"/plain/*.tfrecord ;;
        tfrecord_gzip) cat "$data"/gzip/*.tfrecord.gz ;;
    esac > /dev/null
}
rows_of() { if [[ $1 == csv ]]; then echo "$csv_rows"; else echo "$tfrecord_rows"; fi; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
version=$("$sluice" --version | head -1)
csv_bytes=$(wc -c < "$data/rows.csv")
tfrecord_bytes=$(cat "$data"/plain/*.tfrecord | wc -c)
gzip_bytes=$(cat "$data"/gzip/*.tfrecord.gz | wc -c)
mkdir -p "$(dirname "$out")"
: > "$out"
failed=0
load=$(cut -d' ' -f1-3 /proc/loadavg) # other work on the machine skews every figure: say how busy it was
for ((run = 1; run <= runs; run++)); do
    for job in "${todo[@]}"; do
        read -r fmt tool tool_threads <<< "$job"
        echo "run $run/$runs: $fmt $tool ($tool_threads thread(s))" >&2
        # Pre-warmed, not evicted: every tool finds its files in the page cache, so the figures are
        # parsing speeds, not the disk's (all the data, ~1.1 GB at the default sizes, fits in RAM).
        warm "$fmt"
        common=(--format "$fmt" --threads "$tool_threads" --run "$run" --expect-rows "$(rows_of "$fmt")")
        # A tool that fails is reported and left out of this run; the others still run, and the
        # script exits 1 at the end.
        if [[ $tool == sluice_* ]]; then
            if /usr/bin/time -f "%e %M" -o "$tmp/time" "$sluice" run "$data/$fmt.$tool.sluice" --profile --epochs 1 --json \
                    --threads "$tool_threads" > "$tmp/sluice.jsonl" &&
                record=$("$py" "$peers" sluice-record "$tmp/sluice.jsonl" --tool "$tool" "${common[@]}" \
                    --extra "{\"version\": \"$version\", \"project\": \"$fmt.$tool.sluice\"}"); then :
            else
                echo "formats_bench.sh: FAILED: $fmt $tool: $(grep -h '"run_end"' "$tmp/sluice.jsonl" | tail -c 600)" >&2
                failed=$((failed + 1)); continue
            fi
        elif ! record=$(/usr/bin/time -f "%e %M" -o "$tmp/time" "$py" "$peers" peer "$tool" --data "$data" "${common[@]}"); then
            echo "formats_bench.sh: FAILED: $fmt $tool" >&2
            failed=$((failed + 1)); continue
        fi
        record=${record##*$'\n'} # the record is the last line (should a library print on stdout)
        # The process's wall time (interpreter start and imports included) and peak RSS.
        read -r process_s rss_kib < "$tmp/time"
        echo "${record%\}}, \"process_seconds\": $process_s, \"peak_rss_kib\": $rss_kib}" >> "$out"
    done
done

if [[ $clean == 1 ]]; then
    echo "removing the generated data in $data" >&2
    rm -rf "$data/rows.csv" "$data/plain" "$data/gzip" "$data"/*.sluice "$data/.csv-gen" "$data/.tfrecord-gen"
    rmdir "$data" 2>/dev/null || true
fi

echo "results: $out" >&2
echo "sluice: $version; parallel tools on --threads $threads (nproc $(nproc)); batch 1024; $runs run(s), one full pass each"
echo "data: rows.csv $csv_rows rows ($csv_bytes bytes); $tfrecord_rows tf.train.Example records in $tfrecord_files files," \
    "plain $tfrecord_bytes bytes, GZIP $gzip_bytes bytes"
echo "every tool pre-warmed (its files read into the page cache first): this measures parsing, not the disk"
echo "load average before the runs: $load, after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
"$py" "$here/summarize_formats.py" "$out"
[[ $failed == 0 ]] || { echo "formats_bench.sh: $failed pass(es) failed (see above)" >&2; exit 1; }
