#!/usr/bin/env python3
"""Summarize the JSON lines written by bench/read_bench.sh into a markdown table.

Lines with a "peer" key come from bench/peers/read_peers.py; the others from
`sluice bench read --json`. Each (tool, order) row shows medians over runs -- the median,
not the mean, because one descheduled run on a shared machine would skew a mean.

usage: summarize_read.py RESULTS.jsonl
"""
import json
import statistics
import sys
from collections import defaultdict


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    groups = defaultdict(list)  # (tool, order) -> records, in first-seen order
    with open(sys.argv[1]) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue  # tolerate stray non-JSON output
            rec = json.loads(line)
            groups[(rec.get("peer", "sluice"), rec["order"])].append(rec)
    if not groups:
        sys.exit(f"summarize_read.py: no results in {sys.argv[1]}")

    def med(recs, key):
        vals = [r[key] for r in recs if r.get(key) is not None]
        return statistics.median(vals) if vals else None

    sluice = {order: med(groups[("sluice", order)], "samples_per_s")
              for order in ("sequential", "shuffled") if ("sluice", order) in groups}

    # sluice first, then peers; sequential before shuffled within each tool
    keys = sorted(groups, key=lambda k: (k[0] != "sluice", k[0], k[1] != "sequential"))
    print("| tool | order | runs | samples/s | GB/s | fraction of memcpy | sluice speed-up (same order) |")
    print("|---|---|---:|---:|---:|---:|---:|")
    notes = {}
    for tool, order in keys:
        recs = groups[(tool, order)]
        sps, bps, frac = med(recs, "samples_per_s"), med(recs, "bytes_per_s"), med(recs, "fraction_of_memcpy")
        speedup = "" if tool == "sluice" or not sluice.get(order) or not sps else f"{sluice[order] / sps:.1f}x"
        frac_s = f"{frac:.2f}" if frac is not None else ""
        print(f"| {tool} | {order} | {len(recs)} | {sps:,.0f} | {bps / 1e9:.2f} | {frac_s} | {speedup} |")
        if recs[0].get("note"):
            notes[tool] = recs[0]["note"]

    if sluice.get("shuffled"):
        print()
        print("Sluice shuffled samples/s over each peer's shuffled samples/s (medians):")
        for tool, order in keys:
            if tool != "sluice" and order == "shuffled":
                sps = med(groups[(tool, order)], "samples_per_s")
                print(f"- {tool}: {sluice['shuffled'] / sps:.1f}x")
    for tool, note in notes.items():
        print(f"\nNote: {tool}: {note}.")


if __name__ == "__main__":
    main()
