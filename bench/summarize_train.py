#!/usr/bin/env python3
"""Summarize bench/train_bench.sh results into a markdown table of medians over runs.

Lines with "tool": "sluice" come from `sluice bench train --json` (mode "step": the training
step; mode "run": the whole `sluice run` path); lines with "tool": "pytorch" from
bench/peers/torch_mlp.py, one "variant" per set of OpenMP settings. Sluice's speed-up is taken
against the faster PyTorch variant of each config (by median).

usage: summarize_train.py RESULTS.jsonl
"""
import json
import statistics
import sys
from collections import defaultdict


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    groups = defaultdict(list)  # (config, tool, mode or variant) -> records
    order = []
    with open(sys.argv[1]) as f:
        for line in f:
            if not line.strip().startswith("{"):
                continue
            rec = json.loads(line)
            if rec.get("benchmark") != "train":
                continue
            cfg = rec["config"]
            if cfg not in order:
                order.append(cfg)
            who = rec["mode"] if rec["tool"] == "sluice" else rec.get("variant", "default")
            groups[(cfg, rec["tool"], who)].append(rec)
    if not order:
        sys.exit("summarize_train.py: no results")

    def med(recs, key):
        return statistics.median(r[key] for r in recs)

    variants = sorted({who for (_, tool, who) in groups if tool == "pytorch"})
    runs = max(len(v) for v in groups.values())
    head = ["model (widths)", "batch", "parameters", f"**Sluice** samples/s (median of {runs})", "Sluice step ms"]
    head += [f"PyTorch {v} samples/s" for v in variants]
    head += ["Sluice ÷ best PyTorch", "range of Sluice ÷ best PyTorch, per run"]
    print("| " + " | ".join(head) + " |")
    print("|---|---:|---:|" + "---:|" * (len(head) - 3))
    notes = []
    for cfg in order:
        ours = groups.get((cfg, "sluice", "step"), [])
        if not ours:
            continue
        widths, batch = cfg.split("@")
        s = med(ours, "samples_per_s")
        row = [widths.replace(",", "→"), batch, f"{ours[0]['parameters']:,}", f"{s:,.0f}", f"{med(ours, 'step_ms_median'):.3f}"]
        best, best_recs = 0.0, []
        for v in variants:
            recs = groups.get((cfg, "pytorch", v), [])
            if recs:
                t = med(recs, "samples_per_s")
                row.append(f"{t:,.0f}")
                if t > best:
                    best, best_recs = t, recs
            else:
                row.append("")
        row.append(f"**{s / best:.2f}×**" if best else "")
        # Per-run ratios, pairing the i-th Sluice run with the i-th run of the best variant.
        pairs = [a["samples_per_s"] / b["samples_per_s"] for a, b in zip(ours, best_recs)]
        row.append(f"{min(pairs):.2f}–{max(pairs):.2f}" if pairs else "")
        print("| " + " | ".join(row) + " |")
        full = groups.get((cfg, "sluice", "run"), [])
        if full:
            r = med(full, "samples_per_s")
            notes.append(f"`sluice run` path (pipeline included), {widths.replace(',', '→')} at batch {batch}: "
                         f"{r:,.0f} samples/s (median of {len(full)}), {r / s:.0%} of the step alone, "
                         f"{r / best:.2f}× the best PyTorch")
    print()
    for n in notes:
        print(n)
    torch_versions = sorted({r.get("torch", "?") for k, v in groups.items() if k[1] == "pytorch" for r in v})
    print("PyTorch", ", ".join(torch_versions))


if __name__ == "__main__":
    main()
