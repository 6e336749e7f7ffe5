#!/usr/bin/env python3
"""Summarize bench/larger_than_ram.sh results into a markdown table of medians over runs.

The first line ({"tool": "machine", ...}) describes the machine and the file; every other
line is one tool in one run: {"run", "tool", "threads", "batch", "rows_per_s",
"peak_rss_kib", ...} (fio's also carry "iodepth" and "iops"). Medians, not means: one run
disturbed by the host would skew a mean. The last column sets the shuffled pipeline
(`sluice run`, tool sluice_pipeline) against each shuffled reader, and against what the
disk allows: fio's 4 KiB random-read IOPS divided by the pages a random row touches.

usage: summarize_larger_than_ram.py RESULTS.jsonl
"""
import json
import statistics
import sys
from collections import defaultdict

LABELS = {
    "sluice_pipeline": "sluice run: from_npy → global_shuffle → batch → prefetch",
    "sluice_read": "sluice bench read --order shuffled",
    "numpy": "numpy memmap, a[np.sort(idx)]",
    "numpy_random": "numpy over mmap + MADV_RANDOM, a[np.sort(idx)]",
    "torch_batched": "PyTorch DataLoader, batched __getitem__",
    "fio": "fio 4 KiB random reads, as rows/s",
    "sluice_storage": "sluice bench storage (4 KiB random reads, O_DIRECT), as rows/s",
    "sluice_pipeline_seq": "sluice run: from_npy → batch → prefetch, 1 epoch",
    "sluice_read_seq": "sluice bench read --order sequential, 1 pass",
}
SEQUENTIAL = ("sluice_pipeline_seq", "sluice_read_seq")


def human_bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    machine, groups = None, defaultdict(list)  # (tool, threads, iodepth) -> records, in first-seen order
    with open(sys.argv[1]) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue  # tolerate stray non-JSON output
            rec = json.loads(line)
            if rec["tool"] == "machine":
                machine = rec
            else:
                groups[(rec["tool"], rec["threads"], rec.get("iodepth"))].append(rec)
    if not groups:
        sys.exit(f"summarize_larger_than_ram.py: no results in {sys.argv[1]}")

    def med(recs, key):
        vals = [r[key] for r in recs if r.get(key) is not None]
        return statistics.median(vals) if vals else None

    if machine:
        ram = machine["ram_kib"] * 1024
        print(f"Machine: {machine['cores']} cores, {human_bytes(ram)} RAM (Linux {machine['kernel']}).  ")
        print(f"File: {machine['file_bytes'] / 1e9:.2f} GB ({human_bytes(machine['file_bytes'])}, "
              f"{machine['file_bytes'] / ram:.2f}x RAM): {machine['rows']:,} rows of {machine['row_bytes']} bytes "
              f"from offset {machine['data_offset']}, so a random row touches {machine['pages_per_row']:.4g} "
              f"4 KiB pages on average.  ")
        print(f"Batch {machine['batch']}, {machine['seconds']:g} s per tool and run, {machine['runs']} run(s), "
              f"each tool on a cold file; medians over runs.")
        print()

    pipeline = [recs for (tool, _, _), recs in groups.items() if tool == "sluice_pipeline"]
    ours = med(pipeline[0], "rows_per_s") if pipeline else None
    print("| tool | threads | runs | rows/s | peak RSS | shuffled pipeline vs this |")
    print("|---|---|---:|---:|---:|---:|")
    for (tool, threads, iodepth), recs in groups.items():
        rows = med(recs, "rows_per_s")
        rss = med(recs, "peak_rss_kib")
        label = LABELS.get(tool, tool)
        if tool == "fio":
            label += f" (QD{iodepth}: {med(recs, 'iops'):,.0f} IOPS)"
            nthreads = "1 job"
        elif tool == "sluice_storage":
            label += f" (QD{iodepth}: {med(recs, 'iops'):,.0f} IOPS)"
            nthreads = "1 thread (AIO)"
        elif tool == "torch_batched":
            nthreads = f"{threads} worker{'' if threads == 1 else 's'}"  # DataLoader num_workers
        else:
            nthreads = str(threads)
        if ours is None or tool in SEQUENTIAL or tool == "sluice_pipeline" or not rows:
            ratio = ""
        elif tool in ("fio", "sluice_storage"):
            ratio = f"{100 * ours / rows:.0f}% of the limit"
        else:
            ratio = f"{ours / rows:.2f}x"
        print(f"| {label} | {nthreads} | {len(recs)} | {rows:,.0f} | {human_bytes(rss * 1024)} | {ratio} |")

    fio32 = med(groups.get(("fio", 1, 32), []), "rows_per_s")
    if ours and fio32:
        print()
        print(f"The shuffled pipeline's {ours:,.0f} rows/s are {100 * ours / fio32:.0f}% of the {fio32:,.0f} rows/s "
              "that fio's 4 KiB random reads at queue depth 32 allow.")
    print()
    print("Peak RSS is GNU time's maximum resident set size of the process (file pages mapped in "
          "count); for DataLoader workers it is the largest single process, not the sum.")
    seq = [r for (tool, _, _), recs in groups.items() if tool in SEQUENTIAL for r in recs]
    if seq:
        print("The sequential rows are one full pass each (rows/s over the whole file).", end="")
        pass_peak = med(seq, "pass_peak_rss_kib")  # only `sluice bench read` reports it
        if pass_peak is not None:
            print(" `sluice bench read`'s process peak includes the memcpy measurement it makes after "
                  f"the pass; the pass alone peaked at {human_bytes(pass_peak * 1024)}.", end="")
        print()
    cached = [r["cached_before_kib"] for recs in groups.values() for r in recs if r.get("cached_before_kib") is not None]
    if cached:
        print(f"Cold start: at most {human_bytes(max(cached) * 1024)} of x.npy was in the page cache when a tool started.")


if __name__ == "__main__":
    main()
