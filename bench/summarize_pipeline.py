#!/usr/bin/env python3
"""Summarize bench/pipeline_bench.sh results into a markdown table of medians over runs.

Lines with "benchmark": "pipeline" come from `sluice bench pipeline --json` (with the plain
C++ row gather limit measured in the same run); lines with a "peer" key from
bench/peers/read_peers.py (shuffled order) and bench/peers/tfdata_peers.py; a "machine" line
from bench/peers/machine_record.py. Ends with the headline ratios against each family's best.

usage: summarize_pipeline.py RESULTS.jsonl
"""
import json
import statistics
import sys
from collections import defaultdict


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    sluice, peers, machine = [], defaultdict(list), None
    with open(sys.argv[1]) as f:
        for line in f:
            if not line.strip().startswith("{"):
                continue
            rec = json.loads(line)
            if "machine" in rec:
                machine = rec["machine"]
            elif rec.get("benchmark") == "pipeline":
                sluice.append(rec)
            elif "peer" in rec:
                peers[rec["peer"]].append(rec)
    if not sluice:
        sys.exit("summarize_pipeline.py: no sluice results")
    med = lambda recs, key: statistics.median(r[key] for r in recs)
    ours = med(sluice, "samples_per_s")
    print(f"| tool | samples/s (median of {len(sluice)}) | GB/s | Sluice's speed-up |")
    print("|---|---:|---:|---:|")
    print(f"| **Sluice** from_npy → global_shuffle → batch → prefetch | {ours:,.0f} | {med(sluice, 'bytes_per_s') / 1e9:.2f} | |")
    limit = med(sluice, "gather_limit_samples_per_s") if all("gather_limit_samples_per_s" in r for r in sluice) else None
    if limit:
        print(f"| plain C++ {sluice[0]['gather_limit_threads']}-thread row gather (the practical limit) | {limit:,.0f} | "
              f"{limit * med(sluice, 'bytes_per_s') / ours / 1e9:.2f} | {ours / limit:.2f}x |")
    tf_maps = {name: peers.pop(name, []) for name in ("tfdata_map_overhead", "tfdata_map_overhead_unoptimized")}
    medians = {peer: med(recs, "samples_per_s") for peer, recs in peers.items()}
    for peer, recs in peers.items():
        s = medians[peer]
        note = f" ({recs[0]['note']})" if recs[0].get("note") else ""
        print(f"| {peer}{note} | {s:,.0f} | {med(recs, 'bytes_per_s') / 1e9:.2f} | {ours / s:.1f}x |")
    print()
    families = (("numpy's best", "numpy_"), ("the batched DataLoader's best", "torch_batched_"), ("tf.data's best", "tfdata_"))
    for label, prefix in families:
        best = max(((s, p) for p, s in medians.items() if p.startswith(prefix)), default=None)
        if best:
            print(f"Headline: Sluice is {ours / best[0]:.2f}x {label} ({best[1]})")
    if limit:
        print(f"Headline: Sluice reaches {100 * ours / limit:.0f}% of the practical gather limit")
    if machine:
        print("Machine:", json.dumps(machine))
    print()
    k = sluice[0]["map_chain"]
    print(f"Identity map stage, cost per element (chain of {k}, medians): "
          f"batched {med(sluice, 'map_overhead_batched_ns_per_element'):.3f} ns, "
          f"unbatched {med(sluice, 'map_overhead_unbatched_ns_per_element'):.1f} ns")
    for name, tf_map in tf_maps.items():
        if tf_map:
            what = "default optimizations" if name == "tfdata_map_overhead" else "static optimizations off"
            print(f"tf.data, the same chains, {what} (medians of {len(tf_map)}): "
                  f"batched {med(tf_map, 'map_overhead_batched_ns_per_element'):.3f} ns, "
                  f"unbatched {med(tf_map, 'map_overhead_unbatched_ns_per_element'):.1f} ns "
                  f"(TensorFlow {tf_map[0]['tensorflow']})")
    print("Bottleneck reported by the pipeline:", ", ".join(sorted({r["bottleneck"] for r in sluice})))


if __name__ == "__main__":
    main()
