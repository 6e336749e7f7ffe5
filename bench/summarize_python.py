"""Medians of bench/python_bench.sh's JSON lines, as the tables of BENCHMARKS.md."""
import json
import statistics
import sys
from collections import defaultdict


def main(path):
    groups = defaultdict(list)
    for line in open(path):
        r = json.loads(line)
        if "mode" in r:
            key = ("loader", r["mode"], r["tool"], r["threads"])
        else:
            key = ("functions", r["case"], r["tool"], r["parallel"])
        groups[key].append(r)
    med = lambda rs, k: statistics.median(r[k] for r in rs)  # noqa: E731
    print("| loop | loader | samples/s (median) | input-bound share | runs |")
    print("|---|---|---:|---:|---:|")
    for (kind, mode, tool, threads), rs in sorted(groups.items()):
        if kind != "loader":
            continue
        name = f"sluice.torch, {threads} pipeline threads" if tool == "sluice" else f"DataLoader, batched __getitem__, {threads} workers"
        share = f"{100 * med(rs, 'input_bound_share'):.1f}%" if mode == "train" else "-"
        print(f"| {mode} | {name} | {med(rs, 'samples_per_s'):,.0f} | {share} | {len(rs)} |")
    print()
    print("| case | tool | figure (median) | runs |")
    print("|---|---|---:|---:|")
    for (kind, case, tool, parallel), rs in sorted(groups.items()):
        if kind != "functions":
            continue
        name = "Sluice" if tool == "sluice" else "tf.data"
        if case == "map":
            figure = f"{med(rs, 'overhead_us_per_batch'):.0f} µs per batch of {rs[0]['batch']} (num_parallel_calls {parallel})"
        else:
            figure = f"{med(rs, 'rows_per_s'):,.0f} rows/s"
        print(f"| {case} | {name} | {figure} | {len(rs)} |")


if __name__ == "__main__":
    main(sys.argv[1])
