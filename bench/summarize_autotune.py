#!/usr/bin/env python3
"""Summarize bench/autotune_bench.sh results: elements/s per prefetch buffer_size (median over
runs), the best fixed value, AUTOTUNE's share of it, and what AUTOTUNE chose and why.

usage: summarize_autotune.py RESULTS.jsonl
"""
import json
import statistics
import sys
from collections import defaultdict


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    rates, chosen, why, machine = defaultdict(list), [], [], None
    with open(sys.argv[1]) as f:
        for line in f:
            rec = json.loads(line)
            if "machine" in rec:
                machine = rec["machine"]
                continue
            stats = rec["end"]["stats"]
            rates[rec["buffer_size"]].append(stats["elements_per_s"])
            if rec["buffer_size"] == "AUTOTUNE":
                prefetch = next(s for s in stats["stages"] if s["id"] == "prefetch")
                chosen.append(prefetch["tuned"]["buffer_size"])
                why.append(prefetch["tuned_why"]["buffer_size"])
    if "AUTOTUNE" not in rates:
        sys.exit("summarize_autotune.py: no AUTOTUNE results")
    medians = {size: statistics.median(r) for size, r in rates.items()}
    fixed = {size: m for size, m in medians.items() if size != "AUTOTUNE"}
    best = max(fixed, key=fixed.get)
    runs = len(rates["AUTOTUNE"])
    print(f"| prefetch buffer_size | elements/s (median of {runs}) | share of the best fixed |")
    print("|---|---:|---:|")
    for size in sorted(fixed, key=int) + ["AUTOTUNE"]:
        mark = " (best fixed)" if size == best else ""
        print(f"| {size}{mark} | {medians[size]:,.1f} | {100 * medians[size] / fixed[best]:.0f}% |")
    print()
    per_run = [a / max(fixed_run) for a, fixed_run in
               zip(rates["AUTOTUNE"], zip(*[rates[s] for s in fixed]))]
    print(f"AUTOTUNE reached {100 * medians['AUTOTUNE'] / fixed[best]:.0f}% of the best fixed buffer_size ({best}); "
          f"per run, of that run's best fixed value: {', '.join(f'{100 * p:.0f}%' for p in per_run)}")
    print(f"AUTOTUNE chose buffer_size {', '.join(map(str, chosen))} (started at 2)")
    print(f"Its last reason: {why[-1]}")
    if machine:
        print("Machine:", json.dumps(machine))


if __name__ == "__main__":
    main()
