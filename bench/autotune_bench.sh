#!/usr/bin/env bash
# AUTOTUNE against a sweep: a pipeline whose best prefetch buffer_size is not where AUTOTUNE
# starts (2). range → map(a bursty Python function: every 16th element waits 24 ms, the rest
# nothing) → prefetch(buffer_size) under a simulated 2 ms training step (--consumer-ms 2): on
# average the producer keeps up, but only a buffer that carries the step through a burst lets
# it. Each run measures every fixed buffer_size and AUTOTUNE (from its start: the tuning counts)
# for --seconds each, interleaved; prints the medians, the best fixed value, AUTOTUNE's share of
# it and the value AUTOTUNE chose with its reason. Raw JSON lines go to a results file.
#
# usage: bench/autotune_bench.sh [--runs 5] [--seconds 10] [--threads 2] [--sizes 1,2,4,8,16,32,64]
#                                [--out RESULTS.jsonl]
# env:   SLUICE   sluice binary (default: build/bin/sluice under the repo root); it must embed Python
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)

runs=5 seconds=10 threads=2 sizes=1,2,4,8,16,32,64
out=$root/build/bench-results/autotune-$(date +%Y%m%d-%H%M%S).jsonl
while [[ $# -gt 0 ]]; do
    [[ $1 == -h || $1 == --help || $# -ge 2 ]] || { echo "autotune_bench.sh: $1 needs a value" >&2; exit 2; }
    case $1 in
        --runs) runs=$2 ;;
        --seconds) seconds=$2 ;;
        --threads) threads=$2 ;;
        --sizes) sizes=$2 ;;
        --out) out=$2 ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        *) echo "autotune_bench.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift 2
done
sluice=${SLUICE:-$root/build/bin/sluice}
[[ -x $sluice ]] || { echo "autotune_bench.sh: no sluice binary at $sluice (build it or set SLUICE)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/autotune/bursty.py" "$work/"
project() { # project FILE BUFFER_SIZE: the pipeline with that prefetch buffer_size
    local size=$2
    [[ $size == AUTOTUNE ]] && size='"AUTOTUNE"'
    cat > "$1" <<JSON
{"format": "sluice-project", "version": 1, "name": "autotune-bench",
 "pipeline": {"nodes": [
   {"id": "src", "op": "range", "params": {"stop": 1000000000}},
   {"id": "bursty", "op": "map", "params": {"function": "python", "callable": "bursty:bursty"}},
   {"id": "prefetch", "op": "prefetch", "params": {"buffer_size": $size}}],
  "edges": [["src", "bursty"], ["bursty", "prefetch"]]}}
JSON
}
IFS=, read -r -a fixed <<< "$sizes"
for size in "${fixed[@]}" AUTOTUNE; do project "$work/buffer-$size.sluice" "$size"; done

mkdir -p "$(dirname "$out")"
/usr/bin/env python3 "$here/peers/machine_record.py" --threads "$threads" > "$out" 2>/dev/null || echo '{"machine": {}}' > "$out"
for ((run = 1; run <= runs; run++)); do
    echo "run $run/$runs" >&2
    for size in "${fixed[@]}" AUTOTUNE; do
        # The run's last line is its run_end event: elements/s over the whole run, the stages' tuned values.
        line=$("$sluice" run "$work/buffer-$size.sluice" --profile --seconds "$seconds" --consumer-ms 2 --threads "$threads" \
               --stats-interval 1 --json | tail -n 1)
        printf '{"run": %d, "buffer_size": "%s", "end": %s}\n' "$run" "$size" "$line" >> "$out"
    done
done
echo "results: $out" >&2
python3 "$here/summarize_autotune.py" "$out"
