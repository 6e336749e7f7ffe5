#!/usr/bin/env python3
"""Tables of bench/gpu_bench.sh results: the median over rounds of each program's medians,
Sluice against PyTorch. Matrix products in TFLOP/s; memory-bound kernels in effective GB/s
(the least bytes the op must move over its time) with the share of the device-to-device copy's
bandwidth measured in the same run.

usage: summarize_gpu.py RESULTS.jsonl
"""
import json
import statistics
import sys
from collections import defaultdict


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    gemm, kern = defaultdict(list), defaultdict(list)
    gemm_order, kern_order = [], []
    device = ""
    with open(sys.argv[1]) as f:
        for line in f:
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            if "median_tflops" in r:
                key = (r["size"], r["mode"])
                gemm[key + (r["tool"],)].append(r["median_tflops"])
                if key not in gemm_order:
                    gemm_order.append(key)
            elif "median_gbps" in r:
                kern[(r["op"], r["tool"])].append((r["median_gbps"], r["median_us"]))
                if r["op"] not in kern_order:
                    kern_order.append(r["op"])
            device = r.get("device", device)
    med = statistics.median
    print(f"device: {device}\n")
    if gemm_order:
        print("| size | mode | Sluice TFLOP/s | PyTorch TFLOP/s | Sluice / PyTorch |\n|---|---|---|---|---|")
        for size, mode in gemm_order:
            s, t = gemm.get((size, mode, "sluice")), gemm.get((size, mode, "torch"))
            ratio = f"{med(s) / med(t):.2f}" if s and t else "-"
            print(f"| {size} | {mode} | {med(s):.1f} |" if s else f"| {size} | {mode} | - |", end="")
            print(f" {med(t):.1f} | {ratio} |" if t else f" - | {ratio} |")
        print()
    if kern_order:
        copy = {tool: med([g for g, _ in kern[("copy", tool)]]) for tool in ("sluice", "torch") if kern.get(("copy", tool))}
        print("| op | Sluice GB/s (us) | share of copy | PyTorch eager GB/s (us) | Sluice / PyTorch |\n|---|---|---|---|---|")
        for op in kern_order:
            s, t = kern.get((op, "sluice")), kern.get((op, "torch"))
            cells = [op]
            for v, tool in ((s, "sluice"), (t, "torch")):
                if v:
                    g, us = med([a for a, _ in v]), med([b for _, b in v])
                    cells.append(f"{g:.0f} ({us:.0f})")
                    if tool == "sluice":
                        cells.append(f"{g / copy['sluice']:.0%}" if "sluice" in copy else "-")
                else:
                    cells += ["-", "-"] if tool == "sluice" else ["-"]
            cells.append(f"{med([a for a, _ in s]) / med([a for a, _ in t]):.2f}" if s and t else "-")
            print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
