#!/usr/bin/env python3
"""Python peers of `sluice convert FILE.csv --to tfrecord --shards N`: the same rows written as
tf.train.Example records (int64 columns as Int64List, float32 as FloatList, strings as
BytesList) into N TFRecord shards, row r to shard r mod N, the ways users write it today.

  tfdata   tf.data.experimental.CsvDataset (typed columns from the header's first row, parsed by
           tf.data's C++ reader with AUTOTUNE parallelism) -> batch(4096) -> prefetch, then per
           row a tf.train.Example built in Python and written with tf.io.TFRecordWriter.
  pool     the strongest Python way on T cores: T processes, each parsing its own byte range of
           the file with pandas' C parser in chunks and building and writing its Examples into
           its own shards (N must be a multiple of T), as a multiprocessing conversion script does.

Threads: tf.config.threading intra/inter-op = --threads (tfdata); --threads processes (pool).
--rows limits the rows converted (the rate is what is compared; a full 2 GB file takes the
Python peers minutes). One JSON line per mode: rows, seconds, rows_per_s, mb_per_s (of CSV).

usage: convert_peers.py FILE.csv OUT_DIR [--shards 2] [--threads 2] [--rows N] [--modes tfdata,pool]
"""
import argparse
import csv
import json
import multiprocessing
import os
import shutil
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def column_kinds(path):
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        first = next(reader)
    kinds = []
    for value in first:
        try:
            int(value)
            kinds.append("int64")
        except ValueError:
            try:
                float(value)
                kinds.append("float32")
            except ValueError:
                kinds.append("string")
    return header, kinds


def example_bytes(tf, header, kinds, values):
    feature = {}
    for name, kind, v in zip(header, kinds, values):
        if kind == "int64":
            feature[name] = tf.train.Feature(int64_list=tf.train.Int64List(value=[int(v)]))
        elif kind == "float32":
            feature[name] = tf.train.Feature(float_list=tf.train.FloatList(value=[float(v)]))
        else:
            feature[name] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[v if isinstance(v, bytes) else str(v).encode()]))
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def run_tfdata(path, out, shards, threads, rows):
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(threads)
    header, kinds = column_kinds(path)
    defaults = [tf.int64 if k == "int64" else tf.float32 if k == "float32" else tf.string for k in kinds]
    ds = tf.data.experimental.CsvDataset(path, defaults, header=True)
    if rows:
        ds = ds.take(rows)
    ds = ds.batch(4096).prefetch(tf.data.AUTOTUNE)
    writers = [tf.io.TFRecordWriter(os.path.join(out, "data-%05d-of-%05d.tfrecord" % (s, shards))) for s in range(shards)]
    start = time.perf_counter()
    r = 0
    for batch in ds:
        columns = [c.numpy() for c in batch]
        for i in range(len(columns[0])):
            writers[r % shards].write(example_bytes(tf, header, kinds, [c[i] for c in columns]))
            r += 1
    for w in writers:
        w.close()
    return r, time.perf_counter() - start


def pool_worker(args):
    path, out, begin, end, shard_ids, shards, header, kinds, limit = args
    import pandas as pd
    import tensorflow as tf
    writers = [tf.io.TFRecordWriter(os.path.join(out, "data-%05d-of-%05d.tfrecord" % (s, shards))) for s in shard_ids]
    written = 0
    with open(path, "rb") as f:
        f.seek(begin)
        if begin:
            f.readline()  # the line under way belongs to the previous range
        while f.tell() < end and (not limit or written < limit):
            lines = f.readlines(1 << 22)
            if not lines:
                break
            frame = pd.read_csv(__import__("io").BytesIO(b"".join(lines)), header=None, names=header,
                                dtype={n: ("int64" if k == "int64" else "float32" if k == "float32" else str) for n, k in zip(header, kinds)})
            for values in frame.itertuples(index=False):
                writers[written % len(writers)].write(example_bytes(tf, header, kinds, values))
                written += 1
    for w in writers:
        w.close()
    return written


def run_pool(path, out, shards, threads, rows):
    header, kinds = column_kinds(path)
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        data_start = len(f.readline())
    bounds = [data_start + (size - data_start) * t // threads for t in range(threads + 1)]
    per = shards // threads
    jobs = [(path, out, bounds[t], bounds[t + 1], list(range(t * per, (t + 1) * per)), shards, header, kinds,
             (rows + threads - 1) // threads if rows else 0) for t in range(threads)]
    start = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(threads) as pool:
        written = sum(pool.map(pool_worker, jobs))
    return written, time.perf_counter() - start


def main():
    p = argparse.ArgumentParser()
    p.add_argument("file")
    p.add_argument("out")
    p.add_argument("--shards", type=int, default=2)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rows", type=int, default=0)
    p.add_argument("--modes", default="tfdata,pool")
    a = p.parse_args()

    for mode in a.modes.split(","):
        shutil.rmtree(a.out, ignore_errors=True)
        os.makedirs(a.out)
        rows, seconds = (run_tfdata if mode == "tfdata" else run_pool)(a.file, a.out, a.shards, a.threads, a.rows)
        with open(a.file, "rb") as f:
            f.readline()
            sample = f.read(1 << 20)
        bytes_per_row = len(sample) / max(1, sample.count(b"\n"))
        print(json.dumps({"tool": "python-" + mode, "rows": rows, "seconds": seconds, "rows_per_s": rows / seconds,
                          "mb_per_s": rows * bytes_per_row / 1e6 / seconds, "threads": a.threads, "shards": a.shards}), flush=True)
    shutil.rmtree(a.out, ignore_errors=True)


if __name__ == "__main__":
    main()
