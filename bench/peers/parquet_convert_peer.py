#!/usr/bin/env python3
"""The peer of `sluice convert FILE.parquet --to npy --features ... --shards N`: the same
conversion with pyarrow at its strongest (whole row groups, only the chosen columns, decoded on
pyarrow's thread pool) and numpy, row r of the file to shard r mod N, one .npy per feature and
shard, the headers written first for the row counts the footer gives. Prints one JSON line.

usage: parquet_convert_peer.py FILE.parquet OUT_DIR --features a,b --shards 2 --threads 2
"""
import argparse, json, os, shutil, time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("out")
    ap.add_argument("--features", required=True)
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    a = ap.parse_args()
    pa.set_cpu_count(a.threads)
    pa.set_io_thread_count(a.threads)
    features = a.features.split(",")
    start = time.perf_counter()
    shutil.rmtree(a.out, ignore_errors=True)
    os.makedirs(a.out)
    f = pq.ParquetFile(a.file)
    total = f.metadata.num_rows
    schema = f.schema_arrow
    n = a.shards
    outs = {}
    for name in features:
        dtype = np.dtype(schema.field(name).type.to_pandas_dtype())
        for s in range(n):
            rows = (total - s + n - 1) // n
            h = open(os.path.join(a.out, f"{name}-{s:05d}-of-{n:05d}.npy"), "wb")
            np.lib.format.write_array_header_1_0(h, {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": (rows,)})
            outs[name, s] = h
    offset = 0
    for g in range(f.num_row_groups):
        table = f.read_row_group(g, columns=features, use_threads=True)
        for name in features:
            column = table.column(name).to_numpy()
            for s in range(n):
                first = (s - offset) % n  # the group's first row that goes to shard s
                outs[name, s].write(np.ascontiguousarray(column[first::n]).tobytes())
        offset += table.num_rows
    for h in outs.values():
        h.close()
    seconds = time.perf_counter() - start
    print(json.dumps({"tool": "pyarrow_numpy", "rows": offset, "seconds": seconds, "rows_per_s": offset / seconds,
                      "threads": a.threads, "shards": n, "pyarrow": pa.__version__, "numpy": np.__version__}))


if __name__ == "__main__":
    main()
