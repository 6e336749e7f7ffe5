#!/usr/bin/env python3
"""The Python side of bench/parquet_bench.sh: the data, the pyarrow peers, dd, and the records.

  gen FILE --size SIZE        write FILE with pyarrow: 16 float32 columns f0..f15 (standard
                              normals) and an int64 `label` (0..9), row groups of 1,048,576
                              rows, pyarrow's default compression (snappy), written row group
                              by row group (ParquetWriter) until the file reaches SIZE (e.g.
                              30G, 300M: powers of 1024); memory stays at about one row group.
                              Written as FILE.partial and renamed when complete.
  machine FILE ...            the run's header record: cores, RAM, disk free, the file's size,
                              rows, row groups and codec, pyarrow's and sluice's versions, the
                              command.
  peer TOOL FILE ...          one pyarrow peer for --seconds (new passes as needed), its record:
      pyarrow_iter_batches    ParquetFile(FILE).iter_batches(batch_size=B, use_threads=True),
                              each batch's columns as numpy arrays (to_numpy(zero_copy_only=False))
      pyarrow_row_groups      ParquetFile(FILE).read_row_group(i, use_threads=True) per row
                              group, its columns as numpy arrays, cut into B-row slices (views)
                              both with pa.set_cpu_count(T) and pa.set_io_thread_count(T).
  dd FILE ...                 `dd if=FILE of=/dev/null bs=8M` passes for --seconds (the last one
                              interrupted with SIGINT, on which dd prints what it copied): the
                              storage yardstick, bytes/s and the rows/s that equals.
  sluice-record OUTPUT ...    the record of one `sluice run --profile --json` run, from its
                              final run_end line.
  summarize RESULTS.jsonl     medians over runs, a markdown table.

Every record: {"tool", "run", "threads", "seconds", "rows", "rows_per_s", "mb_per_s",
"peak_rss_kib", "cached_kib_before", ...}; MB are 10^6 bytes of the FILE: file bytes per row
times rows (dd: the bytes it read), so the tools compare on the bytes they got through.
"""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections import defaultdict

ROW_GROUP_ROWS = 1 << 20
FLOAT_COLUMNS = [f"f{i}" for i in range(16)]
COLUMNS = FLOAT_COLUMNS + ["label"]
ME = "parquet_bench_helper.py"


def progress(msg):
    print(f"{ME}: {msg}", file=sys.stderr, flush=True)


def parse_size(text):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([KMGT]?)(?:i?B)?", text.strip(), re.IGNORECASE)
    if not m:
        sys.exit(f"{ME}: bad size {text!r} (e.g. 30G, 300M)")
    return int(float(m.group(1)) * 1024 ** " KMGT".index(m.group(2).upper() or " "))


def file_facts(path):
    """(rows, row groups, file bytes, codec of the first column chunk) from the footer."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    codec = meta.row_group(0).column(0).compression if meta.num_row_groups else None
    return meta.num_rows, meta.num_row_groups, os.path.getsize(path), codec


# ---------------------------------------------------------------------------------------------
# Data


def cmd_gen(args):
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    target = parse_size(args.size)
    os.makedirs(os.path.dirname(os.path.abspath(args.file)), exist_ok=True)
    tmp = args.file + ".partial"
    rng = np.random.default_rng(args.seed)
    schema = pa.schema([(c, pa.float32()) for c in FLOAT_COLUMNS] + [("label", pa.int64())])
    start = time.perf_counter()
    groups = 0
    # Compression left at pyarrow's default (snappy), as a user's to_parquet writes it.
    with pq.ParquetWriter(tmp, schema) as writer:
        while os.path.getsize(tmp) < target:
            cols = [rng.standard_normal(ROW_GROUP_ROWS, dtype=np.float32) for _ in FLOAT_COLUMNS]
            cols.append(rng.integers(0, 10, ROW_GROUP_ROWS, dtype=np.int64))
            writer.write_table(pa.Table.from_arrays(cols, schema=schema), row_group_size=ROW_GROUP_ROWS)
            groups += 1
            if groups % 20 == 0:
                progress(f"{groups} row groups, {os.path.getsize(tmp) / 2**30:.1f} of {target / 2**30:.1f} GiB")
    os.replace(tmp, args.file)
    rows, groups, size, codec = file_facts(args.file)
    took = time.perf_counter() - start
    progress(f"wrote {args.file}: {size:,} bytes ({size / 2**30:.2f} GiB), {rows:,} rows in {groups} row groups "
             f"({codec}), {size / rows:.2f} bytes/row; generation took {took:.1f} s")
    print(json.dumps({"file": args.file, "file_bytes": size, "rows": rows, "row_groups": groups,
                      "codec": codec, "gen_seconds": took}))


def cmd_machine(args):
    import pyarrow

    rows, groups, size, codec = file_facts(args.file)
    with open("/proc/meminfo") as f:
        ram_kib = next(int(line.split()[1]) for line in f if line.startswith("MemTotal:"))
    disk = shutil.disk_usage(os.path.dirname(os.path.abspath(args.file)))
    print(json.dumps({"tool": "machine", "cores": os.cpu_count(), "ram_kib": ram_kib, "kernel": os.uname().release,
                      "disk_free_bytes": disk.free, "disk_total_bytes": disk.total, "file": args.file,
                      "file_bytes": size, "rows": rows, "row_groups": groups, "codec": codec,
                      "bytes_per_row": size / rows, "batch": args.batch, "threads": args.threads,
                      "seconds": args.seconds, "runs": args.runs, "pyarrow": pyarrow.__version__,
                      "sluice": args.sluice_version, "command": args.command}))


# ---------------------------------------------------------------------------------------------
# Records


def finish(rec, args, file_bytes, file_rows):
    """The record with what every one has: rows/s, and MB/s from the file's bytes per row
    (parquet_bench.sh adds the process's wall time, peak RSS and the KiB cached before it)."""
    rec.setdefault("rows_per_s", rec["rows"] / rec["seconds"] if rec["seconds"] > 0 else None)
    if "mb_per_s" not in rec:
        rec["mb_per_s"] = rec["rows_per_s"] * file_bytes / file_rows / 1e6 if rec["rows_per_s"] is not None else None
    head = {"tool": args.tool, "run": args.run, "threads": args.threads}
    head.update(rec)
    return head


def cmd_sluice_record(args):
    end = None
    with open(args.output) as f:
        for line in f:
            if line.startswith("{"):
                event = json.loads(line)
                if event.get("event") == "run_end":
                    end = event
    if end is None:
        sys.exit(f"{ME}: no run_end line in {args.output}")
    if end.get("status") != "ok":
        sys.exit(f"{ME}: sluice run {end.get('status')}: {end.get('error', '')}")
    stats = end["stats"]
    stages = stats["stages"]
    source = next((s for s in stages if s["op"] == "from_parquet"), None)
    if source is None:
        sys.exit(f"{ME}: no from_parquet stage in {args.output}")
    file_rows, _, file_bytes, _ = file_facts(args.file)
    # The pipeline's output elements are batches of B rows (only a pass's last one is short:
    # the file's rows are not a multiple of B), so the rows the consumer got are the batches
    # times B less the short ends of the passes completed. The source's own count is kept
    # beside it (it includes the rows batch and prefetch hold that the consumer never took).
    # (run_end's "passes" counts the pass in progress too.)
    batches = stats["elements"]
    per_pass = -(-file_rows // args.batch)
    rows = batches * args.batch - batches // per_pass * (per_pass * args.batch - file_rows)
    rec = {"seconds": stats["elapsed_s"], "rows": rows, "batches": batches, "passes": rows / file_rows,
           "source_rows": source["elements"], "bottleneck": stats.get("bottleneck"),
           "tuned": {s["id"]: s["tuned"] for s in stages if s.get("tuned")}}
    rec.update(json.loads(args.extra))
    print(json.dumps(finish(rec, args, file_bytes, file_rows)))


def cmd_peer(args):
    import numpy as np  # noqa: F401 (to_numpy needs it; imported before the clock)
    import pyarrow as pa
    import pyarrow.parquet as pq

    pa.set_cpu_count(args.threads)
    pa.set_io_thread_count(args.threads)
    file_rows, _, file_bytes, _ = file_facts(args.file)
    batch = args.batch
    rows = passes = 0
    start = time.perf_counter()
    deadline = start + args.seconds
    done = False
    while not done:
        pf = pq.ParquetFile(args.file)
        if args.tool == "pyarrow_iter_batches":
            for b in pf.iter_batches(batch_size=batch, use_threads=True):
                arrays = [c.to_numpy(zero_copy_only=False) for c in b.columns]
                rows += len(arrays[0])
                if time.perf_counter() >= deadline:
                    done = True
                    break
        else:  # pyarrow_row_groups
            for g in range(pf.num_row_groups):
                table = pf.read_row_group(g, use_threads=True)
                cols = [c.to_numpy() for c in table.columns]
                n = table.num_rows
                for s in range(0, n, batch):
                    views = [c[s:s + batch] for c in cols]
                    rows += len(views[0])
                    if time.perf_counter() >= deadline:
                        done = True
                        break
                if done:
                    break
        if not done:
            passes += 1
            done = time.perf_counter() >= deadline
    seconds = time.perf_counter() - start
    rec = {"seconds": seconds, "rows": rows, "passes": passes + (rows - passes * file_rows) / file_rows}
    print(json.dumps(finish(rec, args, file_bytes, file_rows)))


DD_LINE = re.compile(r"^(\d+) bytes .* copied, ([0-9.e+-]+) s", re.MULTILINE)


def cmd_dd(args):
    file_rows, _, file_bytes, _ = file_facts(args.file)
    total = 0
    passes = 0
    start = time.perf_counter()
    deadline = start + args.seconds
    while True:
        left = deadline - time.perf_counter()
        if left <= 0:
            break
        p = subprocess.Popen(["dd", f"if={args.file}", "of=/dev/null", f"bs={args.bs}"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            err = p.communicate(timeout=left)[1]
            passes += 1
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGINT)  # dd prints what it copied, then exits
            err = p.communicate()[1]
        m = DD_LINE.findall(err)
        if not m:
            sys.exit(f"{ME}: no statistics in dd's output: {err.strip()!r}")
        total += int(m[-1][0])
    seconds = time.perf_counter() - start
    rec = {"seconds": seconds, "bytes": total, "mb_per_s": total / seconds / 1e6,
           # the rows those bytes hold: what a reader could deliver at the disk's pace
           "rows": round(total / file_bytes * file_rows), "passes": passes + (total - passes * file_bytes) / file_bytes,
           "bs": args.bs}
    print(json.dumps(finish(rec, args, file_bytes, file_rows)))


# ---------------------------------------------------------------------------------------------
# Summary

LABELS = {
    "sluice": "sluice run: from_parquet (AUTOTUNE) → batch",
    "pyarrow_iter_batches": "pyarrow iter_batches → numpy",
    "pyarrow_row_groups": "pyarrow read_row_group → numpy slices",
    "dd": "dd bs=8M (storage yardstick)",
}


def human_bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def cmd_summarize(args):
    machine, groups = None, defaultdict(list)
    with open(args.results) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            rec = json.loads(line)
            if rec["tool"] == "machine":
                machine = rec
            else:
                groups[(rec["tool"], rec["threads"])].append(rec)
    if not groups:
        sys.exit(f"{ME}: no results in {args.results}")

    def med(recs, key):
        vals = [r[key] for r in recs if r.get(key) is not None]
        return statistics.median(vals) if vals else None

    if machine:
        ram = machine["ram_kib"] * 1024
        print(f"File: {machine['file']}: {machine['file_bytes'] / 1e9:.2f} GB ({human_bytes(machine['file_bytes'])}, "
              f"{machine['file_bytes'] / ram:.2f}x RAM), {machine['rows']:,} rows in {machine['row_groups']} row groups "
              f"({machine['codec']}), {machine['bytes_per_row']:.2f} bytes/row.  ")
        print(f"Batch {machine['batch']}, {machine['seconds']:g} s per tool and run, {machine['runs']} run(s), "
              f"each tool on a cold file; medians over runs.")
        print()
    sluice = [recs for (tool, _), recs in groups.items() if tool == "sluice"]
    ours = med(sluice[0], "rows_per_s") if sluice else None
    print("| tool | threads | runs | rows/s | MB/s | passes | peak RSS | sluice vs this |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for (tool, threads), recs in groups.items():
        rows, mb, rss, passes = (med(recs, k) for k in ("rows_per_s", "mb_per_s", "peak_rss_kib", "passes"))
        vs = f"{ours / rows:.2f}x" if ours and rows and tool != "sluice" else ""
        print(f"| {LABELS.get(tool, tool)} | {threads} | {len(recs)} | {rows:,.0f} | {mb:,.0f} | "
              f"{passes:.2f} | {human_bytes(rss * 1024) if rss is not None else '-'} | {vs} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("gen")
    p.add_argument("file")
    p.add_argument("--size", required=True)
    p.add_argument("--seed", type=int, default=1)
    p.set_defaults(fn=cmd_gen)
    p = sub.add_parser("machine")
    p.add_argument("file")
    for opt in ("--batch", "--threads", "--runs"):
        p.add_argument(opt, type=int, required=True)
    p.add_argument("--seconds", type=float, required=True)
    p.add_argument("--sluice-version", default="")
    p.add_argument("--command", default="")
    p.set_defaults(fn=cmd_machine)
    for name, fn in (("sluice-record", cmd_sluice_record), ("peer", cmd_peer), ("dd", cmd_dd)):
        p = sub.add_parser(name)
        if name == "sluice-record":
            p.add_argument("output")
            p.add_argument("--file", required=True)
            p.add_argument("--tool", default="sluice")
            p.add_argument("--extra", default="{}", help="JSON object merged into the record")
        elif name == "peer":
            p.add_argument("tool", choices=("pyarrow_iter_batches", "pyarrow_row_groups"))
            p.add_argument("file")
        else:
            p.add_argument("file")
            p.add_argument("--tool", default="dd")
            p.add_argument("--bs", default="8M")
        if name != "sluice-record":
            p.add_argument("--seconds", type=float, required=True)
        p.add_argument("--batch", type=int, default=1024)
        p.add_argument("--threads", type=int, required=True)
        p.add_argument("--run", type=int, default=1)
        p.set_defaults(fn=fn)
    p = sub.add_parser("summarize")
    p.add_argument("results")
    p.set_defaults(fn=cmd_summarize)
    args = ap.parse_args()
    args.fn(args)


if __name__ == "__main__":
    main()
