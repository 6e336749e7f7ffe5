#!/usr/bin/env python3
"""Summarize bench/formats_bench.sh results: Markdown tables of medians over runs (CSV,
TFRecord plain, TFRecord GZIP) and the ratios that matter.

Each line of RESULTS.jsonl is one full pass of one tool: {"run", "tool", "format", "threads",
"rows", "seconds", "rows_per_s", "peak_rss_kib", ...}. Standard library only.

usage: summarize_formats.py RESULTS.jsonl
"""
import json
import statistics
import sys
from collections import defaultdict

# What each tool is, in the table's words (formats_bench.sh and peers/formats_peers.py say more).
WHAT = {
    "sluice_one_thread": "**Sluice** from_csv num_parallel_calls 1 → batch → prefetch, --threads 1",
    "sluice_autotune": "**Sluice** from_csv num_parallel_calls AUTOTUNE → batch → prefetch",
    "numpy_loadtxt": "numpy.loadtxt(dtype=float32)",
    "pandas_c": "pandas.read_csv, C engine",
    "pandas_pyarrow": "pandas.read_csv(engine=\"pyarrow\", dtype_backend=\"pyarrow\")",
    "pyarrow_csv": "pyarrow.csv.read_csv (Arrow table)",
    "polars": "polars.read_csv",
    "tfdata_csvdataset": "tf.data CsvDataset → batch → prefetch",
    "tfdata_decode_csv": "tf.data TextLineDataset → batch → map(decode_csv, AUTOTUNE) → prefetch",
    "sluice_no_interleave": "**Sluice** from_tfrecord → batch → prefetch (files one after another)",
    "sluice_interleave": "**Sluice** from_tfrecord → interleave (no num_parallel_calls) → batch → prefetch",
    "sluice_interleave_autotune": "**Sluice** from_tfrecord → interleave num_parallel_calls AUTOTUNE → batch → prefetch",
    "sluice_interleave_one_thread": "**Sluice** the same, --threads 1",
    "tfdata_interleave": "tf.data interleave(TFRecordDataset, AUTOTUNE) → batch → map(parse_example, AUTOTUNE) → prefetch",
    "tfdata_sequential": "tf.data TFRecordDataset(files) → batch → map(parse_example, AUTOTUNE) → prefetch (no interleave)",
}
TITLES = {"csv": "CSV (rows.csv, 11 columns)", "tfrecord": "TFRecord, plain", "tfrecord_gzip": "TFRecord, GZIP"}
# The Sluice row the others are compared with in each table (when it ran).
OURS = {"csv": "sluice_autotune", "tfrecord": "sluice_interleave_autotune", "tfrecord_gzip": "sluice_interleave_autotune"}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    recs = defaultdict(list)  # (format, tool) -> passes
    with open(sys.argv[1]) as f:
        for line in f:
            if line.strip().startswith("{"):
                r = json.loads(line)
                recs[(r["format"], r["tool"])].append(r)
    if not recs:
        sys.exit("summarize_formats.py: no results")

    def med(fmt, tool, key="rows_per_s"):
        passes = recs.get((fmt, tool))
        return statistics.median(r[key] for r in passes) if passes else None

    for fmt in ("csv", "tfrecord", "tfrecord_gzip"):
        tools = [tool for (f, tool) in recs if f == fmt]
        if not tools:
            continue
        ours_tool = OURS[fmt]
        if (fmt, ours_tool) not in recs:  # left out (--only) or failed: compare with the best Sluice row
            ours_tool = max((t for t in tools if t.startswith("sluice")), key=lambda t: med(fmt, t), default=None)
        ours = med(fmt, ours_tool) if ours_tool else None
        n = max(len(recs[(fmt, t)]) for t in tools)
        print(f"### {TITLES[fmt]}")
        print()
        print(f"| tool | threads | rows/s (median of {n}) | s per pass | peak RSS | {ours_tool or 'Sluice'} vs this |")
        print("|---|---:|---:|---:|---:|---:|")
        for tool in sorted(tools, key=lambda t: (not t.startswith("sluice"), -med(fmt, t))):
            passes = recs[(fmt, tool)]
            rss = med(fmt, tool, "peak_rss_kib") / 1024
            vs = f"{ours / med(fmt, tool):.2f}x" if ours and tool != ours_tool else ""
            notes = {r.get("version", "") for r in passes if not r["tool"].startswith("sluice")} - {""}
            what = WHAT.get(tool, tool) + (f" ({', '.join(sorted(notes))})" if notes else "")
            wrong = {r["rows"] for r in passes if "expected_rows" in r}
            if wrong:
                what += f" — **wrong row count** {sorted(wrong)} (expected {passes[0]['expected_rows']:,})"
            print(f"| {what} | {passes[0]['threads']} | {med(fmt, tool):,.0f} | {med(fmt, tool, 'seconds'):.2f} "
                  f"| {rss:,.0f} MiB | {vs} |")
        print()

    print("### Ratios (of median rows/s)")
    print()

    def ratio(label, a, b):
        ra, rb = med(*a), med(*b)
        if ra and rb:
            print(f"- {label}: **{ra / rb:.2f}x** ({ra:,.0f} / {rb:,.0f} rows/s)")

    ratio("Sluice parallel CSV / Sluice one-thread CSV", ("csv", "sluice_autotune"), ("csv", "sluice_one_thread"))
    csv_peers = [t for (f, t) in recs if f == "csv" and not t.startswith("sluice")]
    if csv_peers:
        best = max(csv_peers, key=lambda t: med("csv", t))
        ratio(f"Sluice parallel CSV / best CSV peer ({best})", ("csv", "sluice_autotune"), ("csv", best))
        tf_csv = [t for t in csv_peers if t.startswith("tfdata")]
        if tf_csv:
            best_tf = max(tf_csv, key=lambda t: med("csv", t))
            ratio(f"Sluice parallel CSV / tf.data CSV ({best_tf}, the faster tf.data form)",
                  ("csv", "sluice_autotune"), ("csv", best_tf))
    for fmt, name in (("tfrecord_gzip", "GZIP"), ("tfrecord", "plain")):
        ratio(f"Sluice {name} interleave num_parallel_calls AUTOTUNE, --threads T / the same on --threads 1",
              (fmt, "sluice_interleave_autotune"), (fmt, "sluice_interleave_one_thread"))
    ratio("Sluice GZIP interleave num_parallel_calls AUTOTUNE / Sluice GZIP interleave without num_parallel_calls",
          ("tfrecord_gzip", "sluice_interleave_autotune"), ("tfrecord_gzip", "sluice_interleave"))
    ratio("Sluice plain interleave AUTOTUNE / without num_parallel_calls",
          ("tfrecord", "sluice_interleave_autotune"), ("tfrecord", "sluice_interleave"))
    for fmt, name in (("tfrecord", "plain"), ("tfrecord_gzip", "GZIP")):
        ratio(f"Sluice / tf.data, TFRecord {name}, interleave AUTOTUNE both",
              (fmt, "sluice_interleave_autotune"), (fmt, "tfdata_interleave"))
        ratio(f"Sluice / tf.data, TFRecord {name}, no interleave both",
              (fmt, "sluice_no_interleave"), (fmt, "tfdata_sequential"))
        # Each at its best form, whichever that is on this machine.
        best = {side: max((t for (f, t) in recs if f == fmt and t.startswith(side)), key=lambda t: med(fmt, t), default=None)
                for side in ("sluice", "tfdata")}
        if all(best.values()):
            ratio(f"Sluice / tf.data, TFRecord {name}, each at its fastest ({best['sluice']} / {best['tfdata']})",
                  (fmt, best["sluice"]), (fmt, best["tfdata"]))
    print()
    print("Threads: the parallel tools get the --threads budget (Sluice --threads, tf.data's private thread pool, "
          "pyarrow's CPU pool, POLARS_MAX_THREADS); numpy.loadtxt and pandas's C engine use one thread. "
          "tf.data has no parallel form for one big CSV file: CsvDataset parses it on one thread "
          "(interleave parallelizes only over several files), and TextLineDataset → batch → map(decode_csv) reads "
          "lines on one thread and parses batches of them in parallel. "
          "Seconds: one full pass; Sluice's as its run_end line reports it (the pass, after the pipeline is built), "
          "a Python peer's around the call (imports not counted); each process's own wall time, start-up included, "
          "is in the raw records (process_seconds). "
          "Peak RSS is the whole process's (a Python peer's includes its interpreter and imports; "
          "numpy/pandas/pyarrow/polars hold the whole file's table, the pipelines stream).")


if __name__ == "__main__":
    main()
