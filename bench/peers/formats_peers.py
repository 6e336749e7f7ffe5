#!/usr/bin/env python3
"""The data and the Python side of bench/formats_bench.sh: parsing CSV and TFRecord.

  gen-csv DIR --rows N           DIR/rows.csv: a header, 10 float columns written as numpy's
                                 savetxt "%.6g" writes them and an integer label (f0..f9,label)
  gen-tfrecord DIR --rows N --files K
                                 tf.train.Example records (float x[32], int64 y) written by
                                 TensorFlow's own TFRecordWriter, DIR/plain/part-XXXXX.tfrecord
                                 and the same records GZIP'd, DIR/gzip/part-XXXXX.tfrecord.gz
  peer TOOL --format F --data DIR --threads T
                                 one full pass of a peer over the data, one JSON record on stdout
  sluice-record OUTPUT.jsonl --tool NAME --format F --threads T
                                 the record of one `sluice run --profile --json` pass, from its
                                 final run_end line

Peers (each in its own process, so that its peak RSS is its own):
  csv            numpy_loadtxt      np.loadtxt(delimiter=",", skiprows=1, dtype=float32), one thread
                 pandas_c           pandas.read_csv, C engine (pandas's default; faster without
                                    dtype=float32 than with it), one thread
                 pandas_pyarrow     pandas.read_csv(engine="pyarrow", dtype_backend="pyarrow"),
                                    pyarrow's threads set to T
                 pyarrow_csv        pyarrow.csv.read_csv into an Arrow table (no pandas conversion)
                 polars             polars.read_csv, POLARS_MAX_THREADS=T
                 tfdata_csvdataset  tf.data.experimental.CsvDataset(header=True) -> batch(1024)
                                    -> prefetch(AUTOTUNE): parses on one thread
                 tfdata_decode_csv  TextLineDataset.skip(1) -> batch(1024) -> map(tf.io.decode_csv,
                                    AUTOTUNE) -> prefetch(AUTOTUNE): lines are read on one thread,
                                    batches of them parsed in parallel (tf.data's fastest form for
                                    one file; interleave only parallelizes over several files)
  tfrecord,      tfdata_interleave  list_files(shuffle=False).interleave(TFRecordDataset,
  tfrecord_gzip                     cycle_length=T, AUTOTUNE, deterministic) -> batch(1024)
                                    -> map(tf.io.parse_example, AUTOTUNE) -> prefetch(AUTOTUNE):
                                    batched parse_example is tf.data's fast path
                 tfdata_sequential  TFRecordDataset(all files, one after another) -> batch(1024)
                                    -> map(tf.io.parse_example, AUTOTUNE) -> prefetch(AUTOTUNE):
                                    no interleave, which on few cores can be the faster form (its
                                    per-record cost is far below parallel interleave's)

Timing: the clock covers the pass alone (imports, and for tf.data building the dataset and tracing
its map functions, are not counted); tf.data passes are iterated inside TensorFlow (Dataset.reduce,
whose small sum function is traced inside the clock: milliseconds), so no Python loop is timed.
tf.data runs on a private thread pool of T threads.
"""
import argparse
import glob
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

FLOAT_COLUMNS = [f"f{i}" for i in range(10)]
CSV_COLUMNS = FLOAT_COLUMNS + ["label"]
BATCH = 1024
CSV_PEERS = ("numpy_loadtxt", "pandas_c", "pandas_pyarrow", "pyarrow_csv", "polars", "tfdata_csvdataset",
             "tfdata_decode_csv")
TFRECORD_PEERS = ("tfdata_interleave", "tfdata_sequential")


def progress(msg):
    print(f"formats_peers.py: {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Data


def gen_csv(out_dir, rows, seed):
    import numpy as np

    os.makedirs(out_dir, exist_ok=True)
    final = os.path.join(out_dir, "rows.csv")
    tmp = final + ".partial"  # renamed at the end: an interrupted run never leaves a "complete" file
    rng = np.random.default_rng(seed)
    chunk = 200_000  # rows formatted at once: bounded memory for any --csv-rows
    fmt = ",".join(["%.6g"] * len(FLOAT_COLUMNS) + ["%d"])
    with open(tmp, "w") as f:
        f.write(",".join(CSV_COLUMNS) + "\n")
        for start in range(0, rows, chunk):
            n = min(chunk, rows - start)
            block = np.empty((n, len(CSV_COLUMNS)))
            # Unit normals: "%.6g" gives 6 significant digits, mostly "-0.123456"-like fields,
            # occasionally an exponent ("1.23456e-05"), as real exported features have.
            block[:, :-1] = rng.standard_normal((n, len(FLOAT_COLUMNS)))
            block[:, -1] = rng.integers(0, 10, n)
            np.savetxt(f, block, fmt=fmt)
            if start // chunk % 10 == 9:
                progress(f"rows.csv: {start + n:,}/{rows:,} rows")
    os.replace(tmp, final)
    progress(f"wrote {final} ({os.path.getsize(final):,} bytes, {rows:,} rows)")


def gen_tfrecord(out_dir, rows, files, seed):
    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(seed)
    # Written into .partial folders and renamed at the end, as for the CSV.
    dirs = {kind: os.path.join(out_dir, kind + ".partial") for kind in ("plain", "gzip")}
    for d in dirs.values():
        os.makedirs(d, exist_ok=True)
        for stale in glob.glob(os.path.join(d, "*")):
            os.remove(stale)
    gzip = tf.io.TFRecordOptions(compression_type="GZIP")
    for i in range(files):
        n = rows // files + (1 if i < rows % files else 0)
        x = rng.standard_normal((n, 32)).astype(np.float32)
        y = rng.integers(0, 1000, n)
        with tf.io.TFRecordWriter(os.path.join(dirs["plain"], f"part-{i:05d}.tfrecord")) as plain, \
                tf.io.TFRecordWriter(os.path.join(dirs["gzip"], f"part-{i:05d}.tfrecord.gz"), gzip) as gz:
            for xj, yj in zip(x.tolist(), y.tolist()):  # lists: protobuf takes them far faster than numpy scalars
                record = tf.train.Example(features=tf.train.Features(feature={
                    "x": tf.train.Feature(float_list=tf.train.FloatList(value=xj)),
                    "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[yj])),
                })).SerializeToString()
                plain.write(record)
                gz.write(record)
        progress(f"tfrecord: file {i + 1}/{files} ({n:,} records)")
    for kind, d in dirs.items():
        final = os.path.join(out_dir, kind)
        if os.path.isdir(final):
            for stale in glob.glob(os.path.join(final, "*")):
                os.remove(stale)
            os.rmdir(final)
        os.replace(d, final)
    progress(f"wrote {files} plain and {files} GZIP TFRecord files ({rows:,} records each way) under {out_dir}")


# ---------------------------------------------------------------------------------------------
# Peers: each returns (rows, seconds, {extra fields})


def numpy_loadtxt(path, threads):
    import numpy as np

    start = time.perf_counter()
    a = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.float32)
    return a.shape[0], time.perf_counter() - start, {"threads": 1, "version": f"numpy {np.__version__}"}


def pandas_c(path, threads):
    import pandas as pd

    start = time.perf_counter()
    df = pd.read_csv(path, engine="c")
    return len(df), time.perf_counter() - start, {"threads": 1, "version": f"pandas {pd.__version__}"}


def pandas_pyarrow(path, threads):
    import pandas as pd
    import pyarrow as pa

    pa.set_cpu_count(threads)
    pa.set_io_thread_count(threads)
    start = time.perf_counter()
    # Arrow-backed columns: the numpy conversion would halve its speed (measured: 1.2M vs 2.3M rows/s).
    df = pd.read_csv(path, engine="pyarrow", dtype_backend="pyarrow")
    return len(df), time.perf_counter() - start, {"version": f"pandas {pd.__version__}, pyarrow {pa.__version__}"}


def pyarrow_csv(path, threads):
    import pyarrow as pa
    import pyarrow.csv as pacsv

    pa.set_cpu_count(threads)
    pa.set_io_thread_count(threads)
    start = time.perf_counter()
    table = pacsv.read_csv(path)
    return table.num_rows, time.perf_counter() - start, {"version": f"pyarrow {pa.__version__}"}


def polars(path, threads):
    os.environ["POLARS_MAX_THREADS"] = str(threads)  # read once, at import
    import polars as pl

    start = time.perf_counter()
    df = pl.read_csv(path)
    return df.height, time.perf_counter() - start, {"version": f"polars {pl.__version__}"}


def _tf(threads):
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")  # AutoGraph's "could not transform <lambda>" warnings: it runs them as-is
    options = tf.data.Options()
    options.threading.private_threadpool_size = threads
    return tf, options


def _tf_pass(tf, ds, rows_of):
    """One pass, iterated inside TensorFlow: Dataset.reduce summing the batch sizes."""
    start = time.perf_counter()
    rows = int(ds.reduce(tf.constant(0, tf.int64), lambda total, b: total + tf.cast(rows_of(b), tf.int64)))
    return rows, time.perf_counter() - start


def tfdata_csvdataset(path, threads):
    tf, options = _tf(threads)
    defaults = [tf.float32] * len(FLOAT_COLUMNS) + [tf.int64]
    ds = (tf.data.experimental.CsvDataset(path, defaults, header=True).batch(BATCH)
          .prefetch(tf.data.AUTOTUNE).with_options(options))
    rows, seconds = _tf_pass(tf, ds, lambda b: tf.shape(b[0])[0])
    return rows, seconds, {"version": f"tensorflow {tf.__version__}"}


def tfdata_decode_csv(path, threads):
    tf, options = _tf(threads)
    defaults = [[0.0]] * len(FLOAT_COLUMNS) + [[tf.constant(0, tf.int64)]]
    ds = (tf.data.TextLineDataset(path).skip(1).batch(BATCH)
          .map(lambda lines: tf.io.decode_csv(lines, defaults), num_parallel_calls=tf.data.AUTOTUNE)
          .prefetch(tf.data.AUTOTUNE).with_options(options))
    rows, seconds = _tf_pass(tf, ds, lambda b: tf.shape(b[0])[0])
    return rows, seconds, {"version": f"tensorflow {tf.__version__}"}


def tfdata_tfrecord(pattern, threads, compression, interleave):
    tf, options = _tf(threads)
    spec = {"x": tf.io.FixedLenFeature([32], tf.float32), "y": tf.io.FixedLenFeature([], tf.int64)}
    if interleave:
        ds = (tf.data.Dataset.list_files(pattern, shuffle=False)
              .interleave(lambda f: tf.data.TFRecordDataset(f, compression_type=compression), cycle_length=threads,
                          num_parallel_calls=tf.data.AUTOTUNE, deterministic=True))
    else:
        ds = tf.data.TFRecordDataset(sorted(glob.glob(pattern)), compression_type=compression)
    ds = (ds.batch(BATCH)
          .map(lambda b: tf.io.parse_example(b, spec), num_parallel_calls=tf.data.AUTOTUNE)
          .prefetch(tf.data.AUTOTUNE).with_options(options))
    rows, seconds = _tf_pass(tf, ds, lambda b: tf.shape(b["y"])[0])
    return rows, seconds, {"version": f"tensorflow {tf.__version__}"}


def run_peer(tool, fmt, data, threads):
    if fmt == "csv":
        if tool not in CSV_PEERS:
            sys.exit(f"formats_peers.py: {tool} is not a CSV peer ({', '.join(CSV_PEERS)})")
        return globals()[tool](os.path.join(data, "rows.csv"), threads)
    if tool not in TFRECORD_PEERS:
        sys.exit(f"formats_peers.py: {tool} is not a TFRecord peer ({', '.join(TFRECORD_PEERS)})")
    interleave = tool == "tfdata_interleave"
    if fmt == "tfrecord":
        return tfdata_tfrecord(os.path.join(data, "plain", "*.tfrecord"), threads, "", interleave)
    return tfdata_tfrecord(os.path.join(data, "gzip", "*.tfrecord.gz"), threads, "GZIP", interleave)


# ---------------------------------------------------------------------------------------------
# Sluice's output


def sluice_record(path):
    """(rows, seconds, extra) of one `sluice run --profile --epochs 1 --json` pass: rows are the
    elements its source stage emitted (one per CSV row / TFRecord record; the sink's elements are
    batches), seconds the pass's wall time as run_end reports it (from the first pull to the
    end of the pass, after the pipeline was built)."""
    end = None
    with open(path) as f:
        for line in f:
            if line.startswith("{"):
                event = json.loads(line)
                if event.get("event") == "run_end":
                    end = event
    if end is None:
        sys.exit(f"formats_peers.py: no run_end line in {path}")
    if end["status"] != "ok":
        sys.exit(f"formats_peers.py: sluice run {end['status']}: {end.get('error', '')}")
    stages = end["stats"]["stages"]
    sources = [s for s in stages if s["op"] in ("from_csv", "from_tfrecord")]
    if not sources:
        sys.exit(f"formats_peers.py: no from_csv/from_tfrecord stage in {path}")
    stats = end["stats"]
    return sources[0]["elements"], end["seconds"], {
        "batches": end["elements"], "bottleneck": stats.get("bottleneck", ""),
        "tuned": {s["id"]: s["tuned"] for s in stages if s.get("tuned")},
    }


# ---------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    g = sub.add_parser("gen-csv")
    g.add_argument("dir")
    g.add_argument("--rows", type=int, required=True)
    g.add_argument("--seed", type=int, default=1)
    g = sub.add_parser("gen-tfrecord")
    g.add_argument("dir")
    g.add_argument("--rows", type=int, required=True)
    g.add_argument("--files", type=int, required=True)
    g.add_argument("--seed", type=int, default=2)
    for name in ("peer", "sluice-record"):
        p = sub.add_parser(name)
        p.add_argument("tool" if name == "peer" else "output")
        if name == "sluice-record":
            p.add_argument("--tool", required=True)
        else:
            p.add_argument("--data", required=True)
        p.add_argument("--format", required=True, choices=("csv", "tfrecord", "tfrecord_gzip"))
        p.add_argument("--threads", type=int, required=True)
        p.add_argument("--run", type=int, default=1)
        p.add_argument("--expect-rows", type=int, help="warn when a pass yields another number of rows")
        p.add_argument("--extra", default="{}", help="JSON object merged into the record")
    args = ap.parse_args()

    if args.command == "gen-csv":
        return gen_csv(args.dir, args.rows, args.seed)
    if args.command == "gen-tfrecord":
        return gen_tfrecord(args.dir, args.rows, args.files, args.seed)
    if args.command == "peer":
        tool = args.tool
        rows, seconds, extra = run_peer(tool, args.format, args.data, args.threads)
    else:
        tool = args.tool
        rows, seconds, extra = sluice_record(args.output)
    if args.expect_rows is not None and rows != args.expect_rows:
        # A parser that drops or invents rows is not faster, it is wrong: say so loudly.
        progress(f"WARNING: {tool} ({args.format}) gave {rows:,} rows, the data has {args.expect_rows:,}")
        extra["expected_rows"] = args.expect_rows
    rec = {"run": args.run, "tool": tool, "format": args.format, "threads": extra.pop("threads", args.threads),
           "rows": rows, "seconds": seconds, "rows_per_s": rows / seconds if seconds > 0 else None}
    rec.update(extra)
    rec.update(json.loads(args.extra))
    print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
