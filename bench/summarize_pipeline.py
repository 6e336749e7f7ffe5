#!/usr/bin/env python3
"""Summarize bench/pipeline_bench.sh results into a markdown table of medians over runs.

Lines with "benchmark": "pipeline" come from `sluice bench pipeline --json`; lines with a
"peer" key from bench/peers/read_peers.py (shuffled order).

usage: summarize_pipeline.py RESULTS.jsonl
"""
import json
import statistics
import sys
from collections import defaultdict


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    sluice, peers = [], defaultdict(list)
    with open(sys.argv[1]) as f:
        for line in f:
            if not line.strip().startswith("{"):
                continue
            rec = json.loads(line)
            if rec.get("benchmark") == "pipeline":
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
    tf_maps = {name: peers.pop(name, []) for name in ("tfdata_map_overhead", "tfdata_map_overhead_unoptimized")}
    for peer, recs in peers.items():
        s = med(recs, "samples_per_s")
        print(f"| {peer} | {s:,.0f} | {med(recs, 'bytes_per_s') / 1e9:.2f} | {ours / s:.1f}x |")
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
