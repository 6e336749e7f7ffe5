#!/usr/bin/env bash
# GPU training benchmark: MLP training samples/s and TFLOP/s on one GPU, Sluice (`sluice bench
# train --device cuda:N`) against PyTorch eager and torch.compile (peers/torch_mlp_train.py) on
# the same model, batch, loss and optimizer (Adam, lr 1e-3, eps 1e-7), at fp32, TF32 and bf16.
#
# The grid: 1024->1024x3->1024 and 4096->4096x3->4096, batches 512 2048 8192 65536, fp32 tf32
# bf16. For each point, in turn (so that clock and thermal drift fall on every tool):
#   - Sluice's training step over pre-generated batches (the GPU engine's run and update; the
#     step includes the batch's staging through pinned memory and its host-to-device copy);
#   - PyTorch eager and torch.compile, each with the batches resident on the GPU (the model
#     alone) and copied every step from pinned host memory (like Sluice's step);
#   - Sluice's whole `sluice run` path (--run): the Trainer on from_npy -> global_shuffle ->
#     batch -> prefetch over generated .npy files (about --run-gib GiB, at least 4 batches), a
#     warm-up epoch then a timed one: end to end against the step alone gives the input-bound share.
# Each round starts with PyTorch's matrix-product peak probe (8192^3 at fp32, TF32, bf16), the
# denominator of "% of peak". Raw JSON lines go to OUT; summarize_gpu_train.py makes the table.
#
# usage: bench/gpu_train_bench.sh BIN_DIR OUT.jsonl [--rounds 2] [--widths 1024,4096] [--batches 512,2048,8192,65536]
#                                 [--precisions fp32,tf32,bf16] [--loss mse] [--device cuda:0] [--seconds 1.5]
#                                 [--run-gib 4] [--no-run] [--append]
#   BIN_DIR holds sluice (a build's bin/, or an unpacked scripts/device-bundle.sh archive's bin/,
#   whose ../lib is put on LD_LIBRARY_PATH). Needs python3 with torch (SLUICE_PYTHON) and a GPU.
#   --widths picks the model widths (each gives widths W,W,W,W,W); --seconds is the aimed time of
#   one timed run (steps are chosen from it and an assumed speed); --append adds to OUT, so that a
#   grid can be measured in parts (e.g. one --widths and --precisions per call) and summarized once.
#   --device cpu only checks the script on a machine without a GPU (no figure, no peak).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
usage() { sed -n '18,26p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[[ $# -ge 2 ]] || usage
bin=$1 out=$2
shift 2
rounds=2 widths_list=1024,4096 batches=512,2048,8192,65536 precisions=fp32,tf32,bf16 loss=mse device=cuda:0
seconds=1.5 run_gib=4 with_run=1 append=0
while [[ $# -gt 0 ]]; do
    case $1 in
        --no-run) with_run=0; shift; continue ;;
        --append) append=1; shift; continue ;;
        -h|--help) usage ;;
    esac
    [[ $# -ge 2 ]] || { echo "gpu_train_bench.sh: $1 needs a value" >&2; exit 2; }
    case $1 in
        --rounds) rounds=$2 ;;
        --widths) widths_list=$2 ;;
        --batches) batches=$2 ;;
        --precisions) precisions=$2 ;;
        --loss) loss=$2 ;;
        --device) device=$2 ;;
        --seconds) seconds=$2 ;;
        --run-gib) run_gib=$2 ;;
        *) echo "gpu_train_bench.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift 2
done
sluice=$bin/sluice
[[ -x $sluice ]] || { echo "gpu_train_bench.sh: no sluice in $bin" >&2; exit 2; }
[[ -d $bin/../lib ]] && export LD_LIBRARY_PATH=$(cd "$bin/../lib" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
python=${SLUICE_PYTHON:-python3}
err=$(mktemp)
trap 'rm -f "$err"' EXIT
[[ $append == 1 ]] || : >"$out"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader >&2 || true

# Timed steps for about $seconds per timed run, from an assumed speed (TFLOP/s) per precision;
# at least 10, at most 400.
steps_for() { # width batch precision
    awk -v w="$1" -v b="$2" -v p="$3" -v s="$seconds" 'BEGIN {
        rate = (p == "fp32") ? 45 : (p == "tf32") ? 180 : 300
        step = 6 * 4 * w * w * b / (rate * 1e12) + 3e-4   # 4 Dense layers, plus a fixed cost
        n = int(s / step); print (n < 10) ? 10 : (n > 400) ? 400 : n }'
}
# Batches in the --run data: about $run_gib GiB of rows, at least 4, at most $2.
run_steps_for() { # width batch steps
    awk -v w="$1" -v b="$2" -v max="$3" -v g="$run_gib" -v l="$loss" 'BEGIN {
        row = 4 * w + ((l == "mse") ? 4 * w : 8)
        n = int(g * 2^30 / (row * b)); if (n > max) n = max; print (n < 4) ? 4 : n }'
}
# Runs a command that prints one JSON line; a failure is recorded as a "skipped" line.
record() { # tool description command...
    local tool=$1 what=$2 line
    shift 2
    if line=$("$@" 2>"$err"); then
        echo "$line" >>"$out"
    else
        echo "gpu_train_bench.sh: $tool $what failed: $(tail -c 300 "$err")" >&2
        "$python" -c 'import json, sys; print(json.dumps({"tool": sys.argv[1], "benchmark": "train", "what": sys.argv[2], "skipped": sys.argv[3]}))' \
            "$tool" "$what" "$(tail -c 300 "$err")" >>"$out"
    fi
}

for ((r = 1; r <= rounds; ++r)); do
    echo "round $r/$rounds" >&2
    PYTHONUNBUFFERED=1 "$python" "$here/peers/torch_mlp_train.py" --peak --device "$device" --runs 7 >>"$out" ||
        echo "gpu_train_bench.sh: the peak probe failed" >&2
    for w in ${widths_list//,/ }; do
        widths=$w,$w,$w,$w,$w
        for b in ${batches//,/ }; do
            for p in ${precisions//,/ }; do
                steps=$(steps_for "$w" "$b" "$p")
                warmup=$((steps / 10 > 3 ? steps / 10 : 3))
                echo "  $widths batch $b $p: $steps steps" >&2
                common=(--widths "$widths" --batch "$b" --loss "$loss" --device "$device" --precision "$p" --json)
                record sluice "$widths@$b $p step" "$sluice" bench train "${common[@]}" --steps "$steps" --warmup "$warmup"
                PYTHONUNBUFFERED=1 "$python" "$here/peers/torch_mlp_train.py" --widths "$widths" --batches "$b" --precisions "$p" \
                    --modes eager,compile --data resident,pinned --loss "$loss" --device "$device" \
                    --steps "$steps" --warmup "$warmup" --runs 3 >>"$out" || echo "gpu_train_bench.sh: the PyTorch peer failed" >&2
                if [[ $with_run == 1 ]]; then
                    record sluice "$widths@$b $p run" "$sluice" bench train "${common[@]}" --run --steps "$(run_steps_for "$w" "$b" "$steps")"
                fi
            done
        done
    done
done
"$python" "$here/summarize_gpu_train.py" "$out"
