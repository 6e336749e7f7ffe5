#!/usr/bin/env python3
"""Tables of bench/gpu_train_bench.sh results: per configuration (widths, batch, precision) the
median over rounds of every tool's samples/s, Sluice against PyTorch eager and torch.compile,
TFLOP/s (6 x Dense weights x samples/s) against the matrix-product peak measured in the same
results (peers/torch_mlp_train.py --peak, per precision), and Sluice end to end (`sluice bench
train --run`: the .npy pipeline and the Trainer) against its step alone.

Sluice's step includes each batch's host-to-device copy, so its like-for-like peer is PyTorch
with the batch copied from pinned host memory every step ("pinned"); the ratios against PyTorch
with the data already on the GPU ("resident", the model alone) follow in brackets. The input-bound
share is 1 - end-to-end samples/s / step samples/s: the part of the end-to-end time that the step
alone does not account for (input pipeline, slicing, events).

usage: summarize_gpu_train.py RESULTS.jsonl
"""
import json
import statistics
import sys
from collections import defaultdict

VARIANTS = ("eager-pinned", "eager-resident", "compile-pinned", "compile-resident")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    runs = defaultdict(list)   # (widths, batch, precision, who) -> records; who: sluice-step, sluice-run, eager-pinned, ...
    peaks = defaultdict(list)  # precision -> TFLOP/s
    order, skipped = [], []
    device = ""
    with open(sys.argv[1]) as f:
        for line in f:
            if not line.strip().startswith("{"):
                continue
            r = json.loads(line)
            if "skipped" in r:
                skipped.append(r)
                continue
            if r.get("benchmark") == "peak":
                peaks[r["precision"]].append(r["tflops"])
                device = r.get("device_name", device)
                continue
            if r.get("benchmark") != "train" or "samples_per_s" not in r:
                continue
            key = (",".join(map(str, r["widths"])), int(r["batch"]), r.get("precision", "fp32"))
            who = f"sluice-{r['mode']}" if r["tool"] == "sluice" else r.get("variant", "pytorch")
            runs[key + (who,)].append(r)
            if key not in order:
                order.append(key)
            if not device and r.get("device_name") not in (None, "cpu"):
                device = r["device_name"]
    if not order:
        sys.exit("summarize_gpu_train.py: no training results")

    med = statistics.median

    def sps(key, who):
        recs = runs.get(key + (who,))
        return med([r["samples_per_s"] for r in recs]) if recs else None

    def tflops(key, who):
        recs = runs.get(key + (who,))
        return med([r["tflops"] for r in recs]) if recs else None

    def num(v, fmt="{:,.0f}"):
        return fmt.format(v) if v is not None else "-"

    def ratio(a, b):
        return f"{a / b:.2f}" if a is not None and b else "-"

    peak = {p: med(v) for p, v in peaks.items()}
    rounds = max(len(v) for v in runs.values())
    print(f"device: {device or '?'}; medians over up to {rounds} rounds; matrix-product peak (TFLOP/s, 8192^3): " +
          (", ".join(f"{p} {peak[p]:.1f}" for p in ("fp32", "tf32", "bf16") if p in peak) or "not measured") + "\n")

    print("| model | batch | precision | **Sluice** samples/s | step ms | PyTorch eager (pinned) | eager (resident) "
          "| torch.compile (pinned) | compile (resident) | Sluice / eager | Sluice / compiled | Sluice end to end | input-bound share |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    def model_name(widths):
        w = widths.split(",")
        return f"{w[0]}→{w[1]}×{len(w) - 2}→{w[-1]}" if len(w) > 3 and len(set(w[1:-1])) == 1 else widths.replace(",", "→")

    for key in order:
        widths, batch, precision = key
        model = model_name(widths)
        s = sps(key, "sluice-step")
        step_ms = med([r["step_ms"] for r in runs[key + ("sluice-step",)]]) if s is not None else None
        v = {name: sps(key, name) for name in VARIANTS}
        e2e = sps(key, "sluice-run")
        share = f"{max(0.0, 1 - e2e / s):.0%}" if e2e is not None and s else "-"
        print(f"| {model} | {batch} | {precision} | {num(s)} | {num(step_ms, '{:.3f}')} | {num(v['eager-pinned'])} | {num(v['eager-resident'])} "
              f"| {num(v['compile-pinned'])} | {num(v['compile-resident'])} "
              f"| {ratio(s, v['eager-pinned'])} ({ratio(s, v['eager-resident'])}) "
              f"| {ratio(s, v['compile-pinned'])} ({ratio(s, v['compile-resident'])}) | {num(e2e)} | {share} |")

    print("\nTFLOP/s (6 × Dense weights × samples/s) and share of the measured peak at that precision:\n")
    print("| model | batch | precision | **Sluice** | Sluice end to end | PyTorch eager (resident) | torch.compile (resident) |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for key in order:
        widths, batch, precision = key
        cells = []
        for who in ("sluice-step", "sluice-run", "eager-resident", "compile-resident"):
            t = tflops(key, who)
            figure = "-" if t is None else f"{t:.1f}" if t >= 10 else f"{t:.3g}"
            cells.append(f"{figure} ({t / peak[precision]:.0%})" if t is not None and precision in peak else figure)
        print(f"| {model_name(widths)} | {batch} | {precision} | " + " | ".join(cells) + " |")

    if skipped:
        print("\nNot measured (times over the rounds):")
        seen = defaultdict(int)
        for r in skipped:
            what = r.get("what") or f"{','.join(map(str, r.get('widths', [])))}@{r.get('batch', '?')} {r.get('precision', '')} {r.get('torch_mode', '')}"
            seen[(r.get("tool", "?"), what, r["skipped"][:200])] += 1
        for (tool, what, why), n in seen.items():
            print(f"- {tool} {what} ({n}×): {why}")


if __name__ == "__main__":
    main()
