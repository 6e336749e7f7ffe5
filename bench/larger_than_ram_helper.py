#!/usr/bin/env python3
"""The small jobs bench/larger_than_ram.sh leaves to Python (standard library only).

  evict FILE...      drop FILEs' pages from the page cache (posix_fadvise DONTNEED: works
                     without privileges for pages nobody maps), then print how many KiB of
                     the first FILE are still cached (util-linux fincore), or "null" without it.
  machine NPY ...    print the run's header record: cores, RAM, the file's size and layout,
                     and how many 4 KiB pages a random row touches on average.
  record ...         turn one tool's raw output (stdin) and GNU time's %M file into the
                     benchmark's uniform JSON line: {"run", "tool", "threads", "batch",
                     "rows_per_s", "peak_rss_kib", ...}.

usage: larger_than_ram_helper.py evict FILE...
       larger_than_ram_helper.py machine NPY --batch B --threads T --seconds S --runs N
       larger_than_ram_helper.py record --kind sluice_run|sluice_read|fio|sluice_storage|peer --tool NAME
                                        --run I --batch B --threads T --npy NPY
                                        --rss-file F [--cached-kib K] < RAW
"""
import argparse
import ast
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys

PAGE = 4096  # fio's --bs and the page size the kernel faults in


def npy_layout(path):
    """(rows, row_bytes, data_offset) of a C-order .npy, parsed by hand so that this
    helper needs no numpy: magic, version, header length, then a Python-literal dict."""
    with open(path, "rb") as f:
        magic = f.read(8)
        if magic[:6] != b"\x93NUMPY":
            sys.exit(f"larger_than_ram_helper.py: {path} is not a .npy file")
        major = magic[6]
        (header_len,) = struct.unpack("<H" if major == 1 else "<I", f.read(2 if major == 1 else 4))
        header = ast.literal_eval(f.read(header_len).decode("latin1"))
        offset = f.tell()
    if header["fortran_order"]:
        sys.exit(f"larger_than_ram_helper.py: {path} is Fortran-ordered; rows are not contiguous")
    shape = tuple(header["shape"])
    # A plain dtype's descr is like '<f4': byte order, kind, item size in bytes.
    m = re.fullmatch(r"[<>|=]?[a-zA-Z](\d+)", header["descr"]) if isinstance(header["descr"], str) else None
    if not m:
        sys.exit(f"larger_than_ram_helper.py: {path}: dtype {header['descr']!r} is not a plain numeric one")
    return shape[0], int(m.group(1)) * math.prod(shape[1:]), offset


def pages_per_row(rows, row_bytes, offset):
    """The exact mean number of PAGE-sized pages a row touches, over all rows. Row i spans
    bytes [offset + i*row_bytes, offset + (i+1)*row_bytes); how many pages that is depends
    only on where it starts within a page, which repeats every PAGE/gcd(row_bytes, PAGE)
    rows: sum one period, multiply, add the remainder."""
    def touched(i):
        start = offset + i * row_bytes
        return (start + row_bytes - 1) // PAGE - start // PAGE + 1
    period = PAGE // math.gcd(row_bytes, PAGE)
    full, rest = divmod(rows, period)
    total = full * sum(touched(i) for i in range(period)) + sum(touched(i) for i in range(rest))
    return total / rows


def cached_kib(path):
    """KiB of `path` in the page cache, from util-linux fincore; None without it."""
    if not shutil.which("fincore"):
        return None
    out = subprocess.run(["fincore", "--bytes", "--noheadings", "--output", "RES", path],
                         capture_output=True, text=True)
    return int(out.stdout.split()[0]) // 1024 if out.returncode == 0 and out.stdout.split() else None


def cmd_evict(args):
    for path in args.files:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    print(json.dumps(cached_kib(args.files[0])))


def cmd_machine(args):
    rows, row_bytes, offset = npy_layout(args.npy)
    with open("/proc/meminfo") as f:
        ram_kib = next(int(line.split()[1]) for line in f if line.startswith("MemTotal:"))
    print(json.dumps({"tool": "machine", "cores": os.cpu_count(), "ram_kib": ram_kib,
                      "kernel": os.uname().release, "file": args.npy,
                      "file_bytes": os.path.getsize(args.npy), "rows": rows, "row_bytes": row_bytes,
                      "data_offset": offset, "pages_per_row": pages_per_row(rows, row_bytes, offset),
                      "batch": args.batch, "threads": args.threads, "seconds": args.seconds,
                      "runs": args.runs}))


def last_json(text, want=lambda j: True):
    """The last line of `text` that is a JSON object satisfying `want`."""
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            j = json.loads(line)
            if want(j):
                return j
    sys.exit("larger_than_ram_helper.py: no JSON result in the tool's output")


def cmd_record(args):
    raw = sys.stdin.read()
    rec = {"run": args.run, "tool": args.tool, "threads": args.threads, "batch": args.batch}
    if args.kind == "sluice_run":
        end = last_json(raw, lambda j: j.get("event") == "run_end")
        if end.get("status") != "ok":
            sys.exit(f"larger_than_ram_helper.py: sluice run ended {end.get('status')}: {end.get('error')}")
        stats = end["stats"]
        source = stats["stages"][0]  # from_npy: its elements are rows
        # The pipeline's elements are batches: rows/s is batches delivered to the consumer
        # per second times B. Only a pass's last batch is short, so this overstates by at
        # most B rows a pass; the source's rows/s is kept too (it also counts the rows that
        # prefetch holds but the consumer never took).
        rec.update(rows_per_s=stats["elements_per_s"] * args.batch, source_rows_per_s=source["elements_per_s"],
                   batches=stats["elements"], rows=source["elements"], seconds=stats["elapsed_s"],
                   passes=end["passes"], bottleneck=stats.get("bottleneck"),
                   tuned={s["id"]: s["tuned"] for s in stats["stages"] if s.get("tuned")})
        if "storage" in source:  # the source's own account of its reads (faults, read-ahead), when it gives one
            rec["storage"] = source["storage"]
    elif args.kind == "sluice_read":
        j = last_json(raw)
        rec.update(rows_per_s=j["samples_per_s"], rows=j["samples"], seconds=j["seconds"], passes=j["passes"],
                   pass_peak_rss_kib=j["peak_rss_bytes"] // 1024)
    elif args.kind == "fio":
        j = json.loads(raw[raw.index("{"):])  # fio may print warnings before its JSON
        job = j["jobs"][0]
        rows, row_bytes, offset = npy_layout(args.npy)
        ppr = pages_per_row(rows, row_bytes, offset)
        # fio's IOPS are 4 KiB page reads; a random row costs `ppr` of them.
        rec.update(rows_per_s=job["read"]["iops"] / ppr, iops=job["read"]["iops"], pages_per_row=ppr,
                   iodepth=int(job["job options"]["iodepth"]), seconds=job["read"]["runtime"] / 1000,
                   mean_latency_us=job["read"]["clat_ns"]["mean"] / 1000)
    elif args.kind == "sluice_storage":  # sluice bench storage --json: 4 KiB random reads, as fio's
        j = last_json(raw)
        rows, row_bytes, offset = npy_layout(args.npy)
        ppr = pages_per_row(rows, row_bytes, offset)
        rec.update(rows_per_s=j["random_read_iops"] / ppr, iops=j["random_read_iops"], pages_per_row=ppr,
                   iodepth=j["queue_depth"], seconds=j["seconds"])
    else:  # peer: larger_than_ram_peers.py --json, already nearly the record
        j = last_json(raw)
        rec.update({k: v for k, v in j.items() if k not in ("tool", "threads", "batch")})
    with open(args.rss_file) as f:
        # GNU time writes %M last (a failing command's exit status would come first).
        rec["peak_rss_kib"] = int(f.read().split()[-1])
    rec["cached_before_kib"] = args.cached_kib
    print(json.dumps(rec))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("evict")
    p.add_argument("files", nargs="+")
    p.set_defaults(fn=cmd_evict)
    p = sub.add_parser("machine")
    p.add_argument("npy")
    for opt in ("--batch", "--threads", "--runs"):
        p.add_argument(opt, type=int, required=True)
    p.add_argument("--seconds", type=float, required=True)
    p.set_defaults(fn=cmd_machine)
    p = sub.add_parser("record")
    p.add_argument("--kind", required=True, choices=("sluice_run", "sluice_read", "fio", "sluice_storage", "peer"))
    p.add_argument("--tool", required=True)
    for opt in ("--run", "--batch", "--threads"):
        p.add_argument(opt, type=int, required=True)
    p.add_argument("--npy", required=True)
    p.add_argument("--rss-file", required=True)
    p.add_argument("--cached-kib", type=json.loads, default=None, help="a number, or null")
    p.set_defaults(fn=cmd_record)
    args = ap.parse_args()
    args.fn(args)


if __name__ == "__main__":
    main()
